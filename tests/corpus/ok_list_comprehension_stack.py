"""A list comprehension of tensors fed to torch.stack is traced: no break."""
import torch


@torch.compile
def f(x):
    powers = [x * i for i in range(1, 4)]
    return torch.stack(powers).sum(dim=0)
