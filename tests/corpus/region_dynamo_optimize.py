"""`torch._dynamo.optimize("eager")(fn)`: the wrapped function is compiled code (GM308)."""
import time

import torch


def step(x):
    y = x * 2
    stamp = time.perf_counter()  # expect: GM308
    return y + 1, stamp


fast_step = torch._dynamo.optimize("eager")(step)


def sample():
    return fast_step, (torch.randn(4),), {}
