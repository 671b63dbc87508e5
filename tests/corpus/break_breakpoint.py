"""A leftover `breakpoint()` in forward splits the graph (GM303); the harness sets PYTHONBREAKPOINT=0."""
import torch
from torch import nn


class Debugged(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        breakpoint()  # expect: GM303
        return h.tanh()


def sample():
    return Debugged(), (torch.randn(3, 4),), {}
