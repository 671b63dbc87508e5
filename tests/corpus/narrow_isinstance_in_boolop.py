"""`isinstance(x, int) and x < 2`: the later operands of an `and` run only where the test holds
(of an `or`, only where it fails), as pyright narrows. torchmetrics' `thresholds` is an int, a
list of floats or a tensor: comparing it after `isinstance(thresholds, int) and` compares a
Python int, which dynamo knows, and the list's elements tested after `isinstance(t, float) and`
are floats. Only the operand that runs where it is a tensor tests tensor data and breaks."""
import torch
from torch import Tensor


def validate(thresholds):
    if isinstance(thresholds, int) and thresholds < 2:
        raise ValueError("expected more than one threshold")
    if isinstance(thresholds, list) and not all(isinstance(t, float) and 0 <= t <= 1 for t in thresholds):
        raise ValueError("expected floats in [0, 1]")
    if not isinstance(thresholds, int) or thresholds < 2:
        pass
    if isinstance(thresholds, Tensor) and thresholds.ndim != 1:
        raise ValueError("expected a 1-d tensor")


def check_range(thresholds):
    if isinstance(thresholds, Tensor) and thresholds.min() < 0:  # expect: GM101
        raise ValueError("expected thresholds of at least 0")


@torch.compile
def f(x, thresholds):
    validate(thresholds)
    return x + 1


@torch.compile
def g(x, thresholds):
    check_range(thresholds)
    return x + 1


def sample():
    x = torch.rand(4)
    return [
        (f, (x, 5), {}),
        (f, (x, [0.0, 0.5, 1.0]), {}),
        (f, (x, torch.linspace(0, 1, 3)), {}),
        (g, (x, torch.linspace(0, 1, 3)), {}),
    ]
