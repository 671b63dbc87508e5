"""`loss.backward()` inside a compiled train step splits the graph (GM506)."""
import torch
from torch import nn

model = nn.Linear(4, 1)


@torch.compile
def train_step(x, target):
    loss = ((model(x) - target) ** 2).mean()
    loss.backward()  # expect: GM506
    return loss.detach()


def sample():
    return train_step, (torch.randn(8, 4), torch.randn(8, 1)), {}
