"""A submodule's forward called from the parent's forward is compiled code; the break is in the child (GM201)."""
import torch
from torch import nn


class Norm(nn.Module):
    def forward(self, x):
        scale = x.abs().max().item()  # expect: GM201
        return x / scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = Norm()

    def forward(self, x):
        return self.norm(self.fc(x)) + 1


def sample():
    return Model(), (torch.randn(2, 4),), {}
