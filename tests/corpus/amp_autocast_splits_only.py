"""A break under `torch.autocast("cpu")` only splits the graph (GM301)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    with torch.autocast("cpu"):
        h = y @ y.T
        print("mixed precision block")  # expect: GM301
        h = h.relu()
    return h.float() + 1


def sample():
    return f, (torch.randn(3, 4),), {}
