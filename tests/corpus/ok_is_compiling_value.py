"""torch.compiler.is_compiling() is a trace-time constant: no break."""
import torch


@torch.compile
def f(x):
    fast = torch.compiler.is_compiling()
    return x * 2 if fast else x + x
