"""A break after (not inside) a loop only splits the graph (GM201)."""
import torch


@torch.compile
def f(x):
    for i in range(3):
        x = x * 0.5 + i
    peak = x.max().item()  # expect: GM201
    return x / peak
