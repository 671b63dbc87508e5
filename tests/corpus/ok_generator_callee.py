"""A generator function consumed inside compiled code is inlined: no break."""
import torch


def shifted(x):
    for k in range(3):
        yield x * k


@torch.compile
def f(x):
    return sum(shifted(x))
