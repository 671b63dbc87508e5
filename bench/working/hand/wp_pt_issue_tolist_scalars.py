"""pytorch/pytorch issue #163798 repro -- hand rewrite.

Source: https://github.com/pytorch/pytorch/issues/163798
HAND: unpack 0-d tensors (a.unbind(0)) instead of .tolist() Python scalars.
"""
import torch

KIND = ".tolist() scalars"


def func(a):
    u0, u1 = a.unbind(0)
    return a * u0 * u1


def make():
    return func


def inputs():
    return [
        (torch.tensor([1, 2]),),
        (torch.tensor([3, -4]),),
        (torch.tensor([0.5, 1.5]),),
        (torch.tensor([2.0, -0.25], dtype=torch.float64),),
        (torch.tensor([100, 3], dtype=torch.int8),),       # int8 wrap-around, same in both
        (torch.tensor([7, 9], dtype=torch.int32),),
        (torch.tensor([1e-3, 1e3]),),
        (torch.tensor([float("inf"), 0.0]),),               # inf * 0 -> nan
        (torch.tensor([2, 5], dtype=torch.int64),),
    ]


def failing_inputs():
    return [
        (torch.tensor([1, 2, 3]),),
        (torch.tensor([1.0]),),
    ]
