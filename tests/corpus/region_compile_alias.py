"""`from torch import compile as tc` and `@tc`: the alias still marks the function as compiled (GM301)."""
import torch
from torch import compile as tc


@tc
def f(x):
    y = x * 2
    print("traced step")  # expect: GM301
    return y + 1


def sample():
    return f, (torch.randn(4),), {}
