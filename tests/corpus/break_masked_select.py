"""`torch.masked_select` returns as many elements as the mask selects and splits the graph (GM403)."""
import torch


@torch.compile
def masked_loss(pred, target, valid):
    diff = (pred - target) ** 2
    picked = torch.masked_select(diff, valid)  # expect: GM403
    return picked.mean()


def sample():
    valid = torch.tensor([True, False, True, True])
    return masked_loss, (torch.randn(4), torch.randn(4), valid), {}
