"""A parameter named as a loop count (`steps`, `iters`, `epochs`) is a Python int: `range(steps)`
is no break (dynamo specialises on the int), where a tensor count would be (GM204)."""
import torch


@torch.compile
def f(x, steps, iters):
    for _ in range(steps):
        x = x * 0.5
    for _ in range(iters):
        x = x + 1
    return x


def sample():
    return f, (torch.ones(4), 3, 2), {}
