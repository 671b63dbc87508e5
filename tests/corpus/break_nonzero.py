"""`torch.nonzero` of a padding mask has a data-dependent size and splits the graph (GM401)."""
import torch


@torch.compile
def f(x):
    mask = x > 0
    positions = torch.nonzero(mask)  # expect: GM401
    return x.sum() + positions.numel()
