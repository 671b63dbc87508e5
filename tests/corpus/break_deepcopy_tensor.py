"""`copy.deepcopy` of an intermediate tensor (instead of `.clone()`) splits the graph (GM505)."""
import copy

import torch


@torch.compile
def f(x):
    y = x.softmax(dim=-1)
    snapshot = copy.deepcopy(y)  # expect: GM505
    return y * 2 - snapshot
