"""`time.perf_counter()` used to time a block inside forward splits the graph (GM308)."""
import time

import torch
from torch import nn


class Timed(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.elapsed = 0.0

    def forward(self, x):
        h = self.fc(x)
        t0 = time.perf_counter()  # expect: GM308
        self.elapsed = t0
        return h.relu()


def sample():
    return Timed(), (torch.randn(2, 4),), {}
