"""`torch.ones(int(t.item()))`: a size read from tensor data splits the graph (GM201)."""
import torch


@torch.compile
def f(x):
    count = (x > 0).sum() + 1
    pad = torch.ones(int(count.item()))  # expect: GM201
    return pad.sum() + x
