"""A break in a `finally` block only splits the graph (GM301)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    try:
        y = y + 1
    finally:
        print("cleanup")  # expect: GM301
    return y * 3
