"""A break under `contextlib.suppress` makes dynamo skip the whole function (GM201, frame-skip)."""
import contextlib

import torch


@torch.compile
def f(x):
    y = x * 2
    bias = 0.0
    with contextlib.suppress(KeyError):
        bias = y.mean().item()  # expect: GM201
    return y + bias
