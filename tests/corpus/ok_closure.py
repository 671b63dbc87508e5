"""A closure capturing a local is inlined: no break."""
import torch


@torch.compile
def f(x):
    bias = x.mean()

    def shift(t):
        return t - bias

    return shift(x).tanh()
