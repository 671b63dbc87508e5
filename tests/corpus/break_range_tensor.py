"""`range()` over a tensor count needs its value as a Python int (GM204)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    n_active = (y > 0).sum()
    acc = y
    for _ in range(n_active):  # expect: GM204
        acc = acc * 0.9
    return acc
