"""A module registers a forward hook on itself (TorchRL's safe actor): the hook is called with
that module, so `module.spec` is what `__init__` set, an instance of a class of this file, and
its methods run inside the compiled call, through a local alias or read directly."""
import torch
from torch import nn


class Bounded:
    def __init__(self, low, high):
        self.low = low
        self.high = high

    def is_in(self, val):
        within = (val >= self.low).all() and (val <= self.high).all()  # expect: GM104
        return within

    def outside(self, val):
        return ((val < self.low) | (val > self.high)).any()


class SafeActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)
        self.spec = Bounded(torch.tensor([-1.0, -0.5]), torch.tensor([1.0, 0.5]))
        self.register_forward_hook(self._project)

    @staticmethod
    def _project(module, args, output):
        spec = module.spec
        if not spec.is_in(output):  # expect: GM101
            output = output.clamp(-0.5, 0.5)
        if module.spec.outside(output * 2):  # expect: GM101
            output = output * 0.5
        return output

    def forward(self, obs):
        return self.net(obs)


def sample():
    torch.manual_seed(0)
    return SafeActor(), (torch.randn(4, 3) * 3,), {}
