"""Calling a `@torch.compiler.disable` helper from forward splits the graph (GM502)."""
import torch
from torch import nn


@torch.compiler.disable
def record_stats(h):
    return h.detach().mean()


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        stat = record_stats(h)  # expect: GM502
        return h.relu() + stat


def sample():
    return Layer(), (torch.randn(2, 4),), {}
