"""`int(t)` and `float(t)` on tensors each need the value in Python (GM203)."""
import torch


@torch.compile
def f(x):
    y = x.abs() * 3
    temperature = float(y.mean())  # expect: GM203
    steps = int(y.max())  # expect: GM203
    return y / temperature + steps
