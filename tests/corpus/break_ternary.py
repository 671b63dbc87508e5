"""A conditional expression whose test is a tensor value splits the graph (GM102)."""
import torch


@torch.compile
def f(x):
    scores = x.softmax(dim=-1)
    scaled = scores * 2 if scores.max() > 0.5 else scores / 2  # expect: GM102
    return scaled + 1
