"""random.randint is traced by dynamo (its value becomes a graph input) when used in tensor math: no break."""
import random

import torch


@torch.compile
def f(x):
    jitter = random.randint(1, 3)
    return x * jitter
