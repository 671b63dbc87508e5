"""Unpacking a two-element integer tensor into Python ints with `u0, u1 = a.tolist()` and scaling by
them, from the pytorch issue about `tolist()` and `capture_scalar_outputs=False`.

Source: https://github.com/pytorch/pytorch/issues/163798 ("tolist() does not graph when
capture_scalar_outputs = False"), fixed to graph-break by https://github.com/pytorch/pytorch/pull/163807.

Breaks: `a.tolist()` (data-dependent: Python ints from tensor values).

HAND: the two values stay 0-d tensors, `a[0]` and `a[1]` (same int64 products, same shape and dtype).
"""
import torch

KIND = "tolist"


def func(a):
    u0, u1 = a.tolist()
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
