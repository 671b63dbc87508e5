"""Hand rewrite of cases/wd_torch_tolist_unpack_scale.py: the values stay 0-d tensors."""
import torch

KIND = "tolist"


def func(a):
    u0, u1 = a[0], a[1]
    return a * u0 * u1


def make():
    return func


def inputs():
    return [
        (torch.tensor([1, 2]),),
        (torch.tensor([3, 4]),),
        (torch.tensor([0, 5]),),
        (torch.tensor([-2, 7]),),
        (torch.tensor([10, -10]),),
        (torch.tensor([1, 1]),),
        (torch.tensor([123, 456]),),
        (torch.tensor([-1, -1]),),
    ]
