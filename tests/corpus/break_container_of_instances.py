"""Calls through containers of in-file instances run those instances: `self.by_size[k](x)` on a
dict of plain objects runs their `__call__`, `self.heads[name](x)` on an nn.ModuleDict runs the
modules' forward, so breaks there are breaks of the compiled forward (transformers' n-gram
logits processors are dispatched this way)."""
import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # expect: GM101
            x = x + 1
        return x


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * x.max().item()  # expect: GM201


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({name: Head() for name in ("a", "b")})
        self.by_size = {2: Scale(2), 3: Scale(3)}

    def forward(self, x, k: int, name: str):
        x = self.heads[name](x)
        return self.by_size[k](x)


def sample():
    model = torch.compile(Model())
    return model, (torch.randn(4), 2, "a"), {}
