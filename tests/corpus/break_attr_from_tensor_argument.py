"""A helper class copies its constructor's arguments into attributes (`self.scale = scale`); the
file builds it with a tensor for one and a Python number for the other. Reading a value of the
tensor attribute breaks; comparing the number does not."""
import torch
from torch import nn


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        if self.scale > 1:  # expect: GM101
            x = x / self.scale
        return x


class Clipper:
    def __init__(self, limit):
        self.limit = limit

    def apply(self, x):
        if self.limit > 0:
            x = x.clamp(-self.limit, self.limit)
        return x


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)
        self.scaler = Scaler(torch.tensor(2.0))
        self.clipper = Clipper(3.0)

    def forward(self, x):
        return self.clipper.apply(self.scaler.apply(self.proj(x)))


def sample():
    torch.manual_seed(0)
    return Head(), (torch.randn(4, 3),), {}
