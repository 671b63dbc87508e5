"""`nn.Parameter(...)` created inside forward splits the graph (GM504)."""
import torch
from torch import nn


class LazyScale(nn.Module):
    def forward(self, x):
        h = x.relu()
        scale = nn.Parameter(torch.ones(x.shape[-1]))  # expect: GM504
        return h * scale


def sample():
    return LazyScale(), (torch.randn(2, 4),), {}
