"""A break inside a `try` body makes dynamo skip the whole function (GM201, frame-skip)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    try:
        scale = y.abs().max().item()  # expect: GM201
    except RuntimeError:
        scale = 1.0
    return y / scale
