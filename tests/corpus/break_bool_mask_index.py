"""Boolean-mask indexing `y[y > 0]` has a data-dependent size and splits the graph (GM402)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    positive_mean = y[y > 0].mean()  # expect: GM402
    return y - positive_mean
