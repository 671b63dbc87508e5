"""id(t) used only as a dict key is supported: no break."""
import torch


@torch.compile
def f(x):
    cache = {}
    cache[id(x)] = x.exp()
    return cache[id(x)] + 1
