"""A set of tensors (hashed by identity) is supported: no break."""
import torch


@torch.compile
def f(x):
    y = x + 1
    seen = {x, y}
    seen.add(x)
    return x * len(seen)
