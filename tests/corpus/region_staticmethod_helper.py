"""A staticmethod helper called from forward is compiled code (GM201)."""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    @staticmethod
    def temperature(logits):
        return logits.std().item() + 1.0  # expect: GM201

    def forward(self, x):
        logits = self.fc(x)
        return (logits / Head.temperature(logits)).softmax(-1)


def sample():
    return Head(), (torch.randn(2, 4),), {}
