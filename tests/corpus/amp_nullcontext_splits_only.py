"""A break under `contextlib.nullcontext()` (the no-autocast branch) only splits the graph (GM201)."""
import contextlib

import torch


@torch.compile
def f(x):
    y = x * 2
    with contextlib.nullcontext():
        peak = y.max().item()  # expect: GM201
    return y - peak
