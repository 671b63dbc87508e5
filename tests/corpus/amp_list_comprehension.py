"""A break inside a list comprehension: dynamo skips the comprehension's frame (GM201)."""
import torch


@torch.compile
def f(x):
    chunks = (x * 2).chunk(2)
    norms = [c.norm().item() for c in chunks]  # expect: GM201
    return x + sum(norms)
