"""The else of `if torch.compiler.is_compiling()` is dead under dynamo: no break in it."""
import torch


@torch.compile
def f(x):
    if torch.compiler.is_compiling():
        y = x * 2
    else:
        y = x * float(x.sum())
        print(y)
    return y
