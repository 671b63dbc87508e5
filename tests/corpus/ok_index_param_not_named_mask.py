"""The same copy through a parameter that holds integer indices (`rows`): an index of fixed size,
no break, and nothing names it a mask, so nothing is reported. A parameter named `mask` that holds
indices would be reported: the name is taken at its word."""
import torch


@torch.compile
def f(x, h, rows, mask_ratio=0.5):
    out = x.clone()
    out[rows] = h[rows] * mask_ratio
    return out


def sample():
    return f, (torch.randn(6), torch.randn(6), torch.tensor([0, 2, 5])), {}
