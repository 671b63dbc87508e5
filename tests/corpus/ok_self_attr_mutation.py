"""Mutating self attributes and stashing a tensor in forward is replayed: no break."""
import torch
from torch import nn


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0
        self.last = None

    def forward(self, x):
        self.steps += 1
        y = x.relu()
        self.last = y.detach()
        return y * 2


def sample():
    return (torch.compile(Tracker()), (torch.randn(4),), {})
