"""Masked assignment `y[y > 0] = 0` is an index_put with a static shape: no break."""
import torch


@torch.compile
def f(x):
    y = x.clone()
    y[y > 0] = 0
    return y
