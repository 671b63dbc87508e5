"""Tensors used as dict keys (hashed by identity) are supported: no break."""
import torch


@torch.compile
def f(x):
    y = x.exp()
    names = {x: "input", y: "exp"}
    return y if names[y] == "exp" else x
