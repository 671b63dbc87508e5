"""A "{}".format(t) whose result is discarded does not break."""
import torch


@torch.compile
def f(x):
    "{}".format(x)
    return x + 1
