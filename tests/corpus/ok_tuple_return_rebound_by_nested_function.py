"""A helper that hands `t` back in a tuple, but a nested function rebinds it first through
`nonlocal` to a Python int: the caller's `t` is a number, and testing it does not break."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["ok_tuple_return_rebound_by_nested_function.py:f"]}


def helper(x, t):
    def count():
        nonlocal t
        t = t.shape[0]

    count()
    return x, t


def f(x, t):
    x, t = helper(x, t)
    if t > 1:
        x = x * 2
    return x


def sample():
    m = getattr(torch, "compile")(f)  # the call the configuration stands for
    return [(m, (torch.randn(3), t), {}) for t in (torch.zeros(3), torch.zeros(1))]
