"""A function defined and called inside forward is compiled code (GM301)."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        def act(h):
            print("activation")  # expect: GM301
            return h.relu()

        return act(self.fc(x)) + 1


def sample():
    return Block(), (torch.randn(2, 4),), {}
