"""A break inside a generator expression makes dynamo skip the whole function (GM201, frame-skip)."""
import torch


@torch.compile
def f(x):
    chunks = (x * 2).chunk(2)
    total = sum(c.norm().item() for c in chunks)  # expect: GM201
    return x + total
