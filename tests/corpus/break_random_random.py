"""`random.random()` deciding a stochastic-depth skip splits the graph (GM309)."""
import random

import torch


@torch.compile
def f(x):
    h = x.relu()
    keep = random.random() < 0.9  # expect: GM309
    return x + h if keep else x
