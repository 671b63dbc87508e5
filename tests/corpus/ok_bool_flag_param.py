"""A Python bool flag such as use_cache is a trace-time constant: no break."""
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, use_cache: bool = False):
        y = self.proj(x)
        cache = (y.detach(),) if use_cache else None
        if use_cache:
            return y, cache
        return y


def sample():
    m = torch.compile(Layer())
    return [(m, (torch.randn(4),), {}), (m, (torch.randn(4),), {"use_cache": True})]
