"""A parameter the call leaves at its default of None is not None where a decorator supplies it
(config injection, `kwargs.setdefault("count", 2)`): the sized draw is traced, no break."""
import functools

import numpy as np
import torch


def with_count(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        kwargs.setdefault("count", 2)
        return fn(*args, **kwargs)

    return wrapper


@with_count
def draw(high, count=None):
    return np.random.randint(0, high, size=count)


@torch.compile
def f(x):
    return x * 2, draw(5)


def sample():
    return f, (torch.randn(3),), {}
