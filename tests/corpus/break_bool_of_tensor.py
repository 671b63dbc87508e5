"""`bool(t)` of a tensor comparison, kept as a Python flag, splits the graph (GM203)."""
import torch


@torch.compile
def f(x):
    y = x.relu()
    saturated = bool((y > 1).all())  # expect: GM203
    return y * 0.5 if saturated else y
