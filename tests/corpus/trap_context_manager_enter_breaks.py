"""A user context manager whose __enter__ reads the clock: dynamo skips the function that uses it (P19)."""
import time
import torch

class Timer:
    def __enter__(self):
        self.start = time.time()  # expect: GM308
        return self

    def __exit__(self, *exc):
        return False

@torch.compile
def f(x):
    y = x * 2
    with Timer():
        z = y + 1
    return z * 3
