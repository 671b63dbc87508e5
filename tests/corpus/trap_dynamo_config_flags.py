"""Module-level dynamo config flags change what breaks: captured scalars and dynamic shapes trace,
but branching on a captured scalar, a float .tolist(), range() and math.* still break."""
import math

import torch

torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.capture_dynamic_output_shape_ops = True


@torch.compile
def f(x):
    y = x * 2
    s = y.sum().item()
    z = y * s + int(y.sum()) + bool(y.sum() > 0)
    n = (y > 0).sum() + 1
    z = z + torch.zeros(n).sum() + y[: n - 1].sum() + torch.nonzero(y > 0).sum()
    z = z + y[y > 0].sum() + torch.unique(y.round()).sum()
    counts = (y.abs() * 10).long().tolist()
    z = z + counts[0]
    if s > 0:  # expect: GM101
        z = z + 1
    values = y.tolist()  # expect: GM202
    z = z + math.sqrt(y.abs().sum())  # expect: GM203
    return z + values[0]


def sample():
    return [(f, (torch.randn(4),), {}), (f, (-torch.ones(4),), {})]
