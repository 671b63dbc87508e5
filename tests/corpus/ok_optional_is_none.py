"""`if mask is None` tests a Python value, not tensor data: no break."""
import torch


@torch.compile
def masked_sum(x, mask=None):
    if mask is None:
        mask = torch.ones_like(x)
    return (x * mask).sum()


def sample():
    return [(masked_sum, (torch.randn(4),), {}), (masked_sum, (torch.randn(4), torch.zeros(4)), {})]
