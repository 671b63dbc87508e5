"""`type(t) is torch.Tensor` is a trace-time constant: no break."""
import torch


@torch.compile
def f(x):
    if type(x) is torch.Tensor:
        x = x + 1
    return x.relu()
