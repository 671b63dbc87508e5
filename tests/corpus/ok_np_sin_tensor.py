"""A numpy ufunc applied directly to a tensor is traced: no break."""
import numpy as np
import torch


@torch.compile
def f(x):
    return np.sin(x) + 1
