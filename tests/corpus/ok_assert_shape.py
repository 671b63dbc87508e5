"""An assert on shapes is checked at trace time: no break."""
import torch


@torch.compile
def f(x):
    assert x.shape[0] == 4, "expected 4 elements"
    return x.cumsum(0)
