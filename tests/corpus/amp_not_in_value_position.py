"""`not` of a tensor in a value position (`b = not (y.sum() > 0)`) skips the whole function (GM104, frame-skip)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    empty = not (y.sum() > 0)  # expect: GM104
    return y + empty
