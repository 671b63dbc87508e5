"""`time.time()` read inside a compiled step splits the graph (GM308)."""
import time

import torch


@torch.compile
def f(x):
    y = x * 2
    start = time.time()  # expect: GM308
    return y + 1, start
