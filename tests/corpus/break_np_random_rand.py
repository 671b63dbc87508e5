"""`np.random.rand()` noise inside compiled code splits the graph (GM309)."""
import numpy as np

import torch


@torch.compile
def f(x):
    y = x * 2
    jitter = np.random.rand()  # expect: GM309
    return y + jitter
