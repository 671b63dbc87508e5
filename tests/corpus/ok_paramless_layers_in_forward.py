"""nn layers without parameters built inside forward are traced: no break."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = nn.ReLU()(self.proj(x))
        y = nn.Dropout(p=0.0)(y)
        y = nn.Identity()(y)
        return nn.Softmax(dim=-1)(y)


def sample():
    return (torch.compile(Block()), (torch.randn(2, 4),), {})
