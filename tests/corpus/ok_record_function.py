"""torch.profiler.record_function is ignored by dynamo: no break."""
import torch


@torch.compile
def f(x):
    with torch.profiler.record_function("scale"):
        y = x * 3
    return y.sum()
