"""random.uniform is traced by dynamo: no break."""
import random

import torch


@torch.compile
def f(x):
    scale = random.uniform(0.9, 1.1)
    return x * scale
