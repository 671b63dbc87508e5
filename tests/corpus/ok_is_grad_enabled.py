"""torch.is_grad_enabled() is a trace-time constant: no break."""
import torch


@torch.compile
def f(x):
    if torch.is_grad_enabled():
        x = x * 2
    return x.sin()
