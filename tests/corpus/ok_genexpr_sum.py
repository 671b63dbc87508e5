"""sum() over a generator expression of tensors is traced: no break."""
import torch


@torch.compile
def f(x):
    return sum(x.roll(i) for i in range(3))
