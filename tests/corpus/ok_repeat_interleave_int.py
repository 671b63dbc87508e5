"""torch.repeat_interleave with an int repeat count has a static shape: no break."""
import torch


@torch.compile
def f(x):
    return torch.repeat_interleave(x, 2)
