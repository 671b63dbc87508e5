"""A parameter every caller leaves at a constant default (`zero_division=0.0`) or passes a value
that is never None (`minlength=4 * n`): dynamo traces the Python constant, so `zero_division ==
"warn"` is False and `minlength is None` is False while tracing, and the tensor tests in those
arms never run (torchmetrics' `_safe_divide` and `_bincount`). The parameter is rebound after
the test, which keeps what the test reads the argument. Where a caller passes "warn" or leaves
`minlength` out, the arm runs and breaks, also where that caller is found after the function was
walked for the others (`scale` is called with its default first, then by `slow_scale`)."""
import warnings

import torch


def safe_divide(num, denom, zero_division=0.0):
    if zero_division == "warn" and torch.any(denom == 0):
        warnings.warn("zero division")
    zero_division = 0.0 if zero_division == "warn" else zero_division
    return torch.where(denom != 0, num / denom, torch.full((), zero_division))


def warned_divide(num, denom, zero_division=0.0):
    if zero_division == "warn" and torch.any(denom == 0):  # expect: GM101
        warnings.warn("zero division")  # expect: GM307
    return num / denom


def bincount(x, minlength=None):
    if minlength is None:
        minlength = len(torch.unique(x))
    return x.new_zeros(minlength).index_add_(0, x, torch.ones_like(x))


def counts(x, minlength=None):
    if minlength is None:
        minlength = len(torch.unique(x))  # expect: GM404
    return x.new_zeros(minlength).index_add_(0, x, torch.ones_like(x))


def scale(x, mode="fast"):
    if mode == "slow" and x.sum() > 0:  # expect: GM101
        x = x * 2
    return x


def slow_scale(x):
    return scale(x, "slow")


@torch.compile
def f(num, denom, labels):
    n = labels.shape[0]
    return safe_divide(num, denom), bincount(labels, minlength=4 * n), scale(num) + slow_scale(num)


@torch.compile
def g(num, denom, labels):
    return warned_divide(num, denom, "warn"), counts(labels)


def sample():
    num, denom = torch.rand(4), torch.tensor([1.0, 0.0, 2.0, 3.0])
    labels = torch.tensor([0, 1, 1, 3])
    return [(f, (num, denom, labels), {}), (g, (num, denom, labels), {})]
