"""A module-level helper (`rotate_half(q)`, unannotated parameter) called with tensors is compiled code (GM301)."""
import torch
from torch import nn


def rotate_half(t):
    x1, x2 = t.chunk(2, dim=-1)
    print("rotating", t.shape)  # expect: GM301
    return torch.cat((-x2, x1), dim=-1)


class Rotary(nn.Module):
    def forward(self, q, cos, sin):
        return q * cos + rotate_half(q) * sin


def sample():
    return Rotary(), (torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4)), {}
