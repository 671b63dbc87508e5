"""Mutating a module-level counter is replayed as a side effect: no break."""
import torch

calls = 0


@torch.compile
def f(x):
    global calls
    calls += 1
    return x * 2
