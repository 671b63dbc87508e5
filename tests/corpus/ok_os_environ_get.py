"""Reading os.environ.get at trace time is constant-folded: no break."""
import os

import torch


@torch.compile
def f(x):
    if os.environ.get("GRAPHMEND_DEBUG_SCALE", "0") == "1":
        return x * 10
    return x * 2
