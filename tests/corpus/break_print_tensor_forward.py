"""print() of an intermediate tensor inside nn.Module.forward splits the graph (GM301)."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x).relu()
        print("hidden", h)  # expect: GM301
        return h * 2


def sample():
    return Block(), (torch.randn(2, 8),), {}
