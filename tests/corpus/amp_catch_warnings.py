"""A break under `warnings.catch_warnings()` makes dynamo skip the whole function (GM201, frame-skip)."""
import warnings

import torch


@torch.compile
def f(x):
    y = x * 2
    with warnings.catch_warnings():
        scale = y.norm().item()  # expect: GM201
    return y / scale
