"""An early `return` under is_compiling() leaves the eager-only tail untraced: no break."""
import torch


@torch.compile
def f(x):
    y = x.tanh()
    if torch.compiler.is_compiling():
        return y
    print("eager path", y.sum().item())
    return y.clone()
