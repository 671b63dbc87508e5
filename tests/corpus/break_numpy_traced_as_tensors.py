"""NumPy calls in compiled code run as tensor ops (torch._numpy), even on Python numbers and lists:
converting the result to a Python number, testing it or bounding a slice with it breaks. Folded
one-argument float functions of numbers (`np.ceil`, `np.sqrt`) do not; neither does arithmetic
with the traced value."""
import numpy as np
import torch


@torch.compile
def f(x):
    y = x * 2
    n = int(np.prod(list(x.size())))  # expect: GM203
    m = float(np.mean([1.0, 2.0]))  # expect: GM203
    k = int(np.maximum(x.shape[0], 1))  # expect: GM203
    half = int(np.ceil(x.shape[0] / 2)) + float(np.sqrt(x.shape[1]))
    return y.reshape(-1)[:6] * n + m + k + half + np.prod(x.shape)


def g(x):
    y = x + 1
    if np.max(x.shape) > 3:  # expect: GM101
        y = y * 2
    return y


def sample():
    return [(f, (torch.randn(2, 3),), {}), (torch.compile(g), (torch.randn(4, 5),), {})]
