"""A `while` whose condition is a tensor value breaks once per iteration (GM103)."""
import torch


@torch.compile
def renormalize(x):
    y = x * 4
    while y.norm() > 1.0:  # expect: GM103
        y = y * 0.5
    return y + 1


def sample():
    return renormalize, (torch.randn(8) * 10,), {}
