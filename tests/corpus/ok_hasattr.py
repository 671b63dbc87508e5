"""hasattr on a module attribute is decided at trace time: no break."""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, with_bias):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        if with_bias:
            self.extra = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        y = self.proj(x)
        if hasattr(self, "extra"):
            y = y + self.extra
        return y


def sample():
    return [(torch.compile(Head(True)), (torch.randn(4),), {}), (torch.compile(Head(False)), (torch.randn(4),), {})]
