"""`@torch.compile(mode="reduce-overhead")` with arguments still marks the function as compiled (GM401)."""
import torch


@torch.compile(mode="reduce-overhead")
def active_positions(x):
    y = x.relu()
    idx = y.nonzero()  # expect: GM401
    return y.sum() + idx.numel()


def sample():
    return active_positions, (torch.randn(6),), {}
