"""Looping over an nn.ModuleList unrolls at trace time: no break."""
import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def sample():
    return (torch.compile(Stack()), (torch.randn(2, 4),), {})
