"""x.data_ptr() whose result is never used is dropped by dynamo: no break."""
import torch


@torch.compile
def f(x):
    x.data_ptr()
    return x * 2
