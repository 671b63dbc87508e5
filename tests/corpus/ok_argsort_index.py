"""Indexing with an integer tensor (x[torch.argsort(x)]) has a static shape: no break."""
import torch


@torch.compile
def f(x):
    return x[torch.argsort(x)]
