"""`torch.bincount` of expert assignments has a data-dependent size and splits the graph (GM405)."""
import torch


@torch.compile
def load_balance(router_logits):
    assigned = router_logits.argmax(dim=-1)
    counts = torch.bincount(assigned)  # expect: GM405
    return counts.float().std() + router_logits.sum()


def sample():
    return load_balance, (torch.randn(6, 3),), {}
