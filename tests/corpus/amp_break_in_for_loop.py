"""`.item()` inside a `for` loop: dynamo gives up and runs the whole function eagerly (GM201, frame-skip)."""
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        total = 0.0
        for layer in self.layers:
            x = layer(x).relu()
            total += x.abs().mean().item()  # expect: GM201
        return x * total


def sample():
    return Stack(), (torch.randn(2, 4),), {}
