"""Tensor.sort() is a graph op with static output shapes: no break."""
import torch


@torch.compile
def f(x):
    values, indices = x.sort(descending=True)
    return values[:2] + indices[:2]
