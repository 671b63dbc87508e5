"""`compiled = torch.compile(model)` with `model = Net()`: Net.forward is compiled code (GM301)."""
import torch
from torch import nn

GRAPHMEND_CONFIG = {"compile-forward": False}  # only the torch.compile(model) call makes it compiled


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        print("forward")  # expect: GM301
        return h.relu()


class Unused(nn.Module):
    def forward(self, x):
        print("never compiled")
        return x


model = Net()
compiled = torch.compile(model)


def sample():
    return compiled, (torch.randn(2, 4),), {}
