"""In-place ops on an input tensor are functionalized: no break."""
import torch


@torch.compile
def f(x):
    x.mul_(2)
    x.add_(1)
    x[0] = 0.0
    return x
