"""pytorch/pytorch issue #163798 repro: `.tolist()` unpacked into Python scalars that then scale
the tensor ("tolist() does not graph when capture_scalar_outputs = False"; since PR #163807
dynamo graph-breaks on tolist, as it does on .item()).

Source: https://github.com/pytorch/pytorch/issues/163798 (the `func` of the issue body; fix/behaviour
change in https://github.com/pytorch/pytorch/pull/163807).

Breaks: `u0, u1 = a.tolist()` -- Tensor.tolist() with capture_scalar_outputs=False.

HAND: unpack the tensor itself, `u0, u1 = a.unbind(0)`: the 0-d tensors multiply exactly like the
Python scalars (same result dtype by type promotion -- a 0-d tensor of the same dtype does not
promote, nor does a Python scalar of the same kind -- and the same per-element arithmetic); a
length other than 2 still raises the same unpacking ValueError.
"""
import torch

KIND = ".tolist() scalars"


def func(a):
    u0, u1 = a.tolist()
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
