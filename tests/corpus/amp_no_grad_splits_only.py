"""A break under `torch.no_grad()` only splits the graph: dynamo resumes inside the block (GM201)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    with torch.no_grad():
        scale = y.abs().max().item()  # expect: GM201
        z = y / scale
    return z + 1
