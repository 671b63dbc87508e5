"""Branching on `requires_grad` reads metadata known at trace time: no break."""
import torch


@torch.compile
def f(x):
    if x.requires_grad:
        return x * 2
    return x.detach() + 1


def sample():
    return [(f, (torch.randn(4),), {}), (f, (torch.randn(4, requires_grad=True),), {})]
