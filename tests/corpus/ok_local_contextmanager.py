"""A @contextlib.contextmanager defined inside compiled code is traced: no break."""
import contextlib

import torch


@torch.compile
def f(x):
    @contextlib.contextmanager
    def scaled():
        yield 2.0

    with scaled() as s:
        y = x * s
    return y
