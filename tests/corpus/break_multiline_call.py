"""A break in a call written over several lines is marked on the call's first line (GM201)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    threshold = torch.quantile(  # expect: GM201
        y,
        0.75,
    ).item()  # the break belongs to the whole expression, marked above
    return y.clamp(max=threshold)
