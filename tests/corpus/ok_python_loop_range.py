"""A Python loop over range(int) building tensors unrolls at trace time: no break."""
import torch


@torch.compile
def f(x):
    out = torch.zeros_like(x)
    for k in range(3):
        out = out + x ** k
    return out
