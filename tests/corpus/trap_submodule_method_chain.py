"""Calls through submodules reach in-file classes: self.encoder.m(), and layers of a ModuleList."""
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def set_scale(self, x):
        self.scale = float(x.mean())  # expect: GM203

    def forward(self, x):
        return x * self.scale


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(2)])

    def calibrate(self, x):
        for layer in self.layers[:1]:
            layer.set_scale(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x):
        self.encoder.calibrate(x)
        return x + 1


def sample():
    return Model(), (torch.randn(4),), {}
