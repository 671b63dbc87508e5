"""Using x.any() as a tensor (not as a bool) stays in the graph: no break."""
import torch


@torch.compile
def f(x):
    return x + (x > 1).any()
