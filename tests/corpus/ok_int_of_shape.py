"""int() of a shape entry is a Python int, not a tensor conversion: no break."""
import torch


@torch.compile
def f(x):
    n = int(x.shape[0])
    return x.reshape(n // 2, 2).sum(dim=1)
