"""A break under `torch.enable_grad()` only splits the graph (GM301)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    with torch.enable_grad():
        print("grad enabled region")  # expect: GM301
        z = y.sin()
    return z + 1
