"""`nn.Linear(...)` constructed inside forward (a lazily built head) splits the graph (GM504)."""
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x):
        h = x.relu()
        proj = nn.Linear(h.shape[-1], 2)  # expect: GM504
        return proj(h)


def sample():
    return Head(), (torch.randn(3, 4),), {}
