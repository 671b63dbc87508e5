"""A module-level function handed to a module's constructor and called through the attribute
(`DEQFixedPoint(f, forward_iteration)`, then `self.solver(...)` in `forward`): dynamo traces the
function, so its `.item()` calls break the compiled forward."""
import torch
from torch import nn


def forward_iteration(f, x0, max_iter=3):
    f0 = f(x0)
    res = []
    for _ in range(max_iter):
        x = f0
        f0 = f(x)
        res.append((f0 - x).norm().item())  # expect: GM201
    return f0, res


class FixedPoint(nn.Module):
    def __init__(self, f, solver):
        super().__init__()
        self.f = f
        self.solver = solver

    def forward(self, x):
        with torch.no_grad():
            z, self.forward_res = self.solver(lambda z: self.f(z, x), torch.zeros_like(x))
        return self.f(z, x)


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, z, x):
        return torch.tanh(self.lin(z) + x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        cell = Cell()
        self.deq = FixedPoint(cell, forward_iteration)

    def forward(self, x):
        return self.deq(x)


def sample():
    return torch.compile(Model(), backend="eager"), (torch.randn(2, 4),), {}
