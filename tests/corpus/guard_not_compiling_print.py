"""`if not torch.compiler.is_compiling(): print(...)` is dead under dynamo: no break."""
import torch


@torch.compile
def f(x):
    y = x * 2
    if not torch.compiler.is_compiling():
        print("eager debug:", y)
    return y + 1
