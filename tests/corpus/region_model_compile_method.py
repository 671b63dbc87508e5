"""`model.compile()` makes the model's forward compiled code, even with compile-forward off (GM201)."""
import torch
from torch import nn

GRAPHMEND_CONFIG = {"compile-forward": False}


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        s = self.fc(x).sigmoid()
        best = s.max().item()  # expect: GM201
        return s / best


class NotCompiled(nn.Module):
    def forward(self, x):
        return x + x.sum().item()  # expect if compiled: GM201


model = Scorer()
model.compile()


def sample():
    # A fresh instance: the harness compiles it with its own counting backend.
    return Scorer(), (torch.randn(3, 4),), {}


def sample_if_compiled():
    return NotCompiled(), (torch.randn(3, 4),), {}
