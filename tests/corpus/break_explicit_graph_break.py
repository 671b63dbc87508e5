"""An explicit `torch._dynamo.graph_break()` between two stages splits the graph (GM501)."""
import torch
from torch import nn


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = self.a(x).relu()
        torch._dynamo.graph_break()  # expect: GM501
        return self.b(h)


def sample():
    return TwoStage(), (torch.randn(2, 4),), {}
