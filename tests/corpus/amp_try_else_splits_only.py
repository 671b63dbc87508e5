"""A break in the `else` block of a try statement only splits the graph (GM301)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    try:
        y = y + 1
    except ValueError:
        y = y - 1
    else:
        print("no error")  # expect: GM301
    return y * 3
