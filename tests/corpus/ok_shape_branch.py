"""Branches on static shapes are decided at trace time: no break."""
import torch


def g(x):
    if x.shape[0] > 2:
        return x[:2] * 2
    return x - 1


def sample():
    compiled = torch.compile(g)
    return [(compiled, (torch.randn(4),), {}), (compiled, (torch.randn(2),), {})]
