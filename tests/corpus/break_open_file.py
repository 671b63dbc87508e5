"""`with open(...)` in compiled code: dynamo cannot resume under a file object and skips the function (GM304)."""
import os

import torch


@torch.compile
def f(x):
    y = x * 2
    with open(os.devnull) as handle:  # expect: GM304
        extra = len(handle.read())
    return y + extra
