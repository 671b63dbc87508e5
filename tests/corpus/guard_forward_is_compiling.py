"""A guarded print in nn.Module.forward is dead under dynamo: no break."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        out = self.fc(x)
        if not torch.compiler.is_compiling():
            print("logits", out)
        return out


def sample():
    return (torch.compile(Net()), (torch.randn(3, 4),), {})
