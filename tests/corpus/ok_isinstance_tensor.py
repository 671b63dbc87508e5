"""isinstance() on a tensor argument is decided at trace time: no break."""
import torch


@torch.compile
def f(x):
    if isinstance(x, torch.Tensor):
        return x * 2
    return torch.tensor(x) * 2
