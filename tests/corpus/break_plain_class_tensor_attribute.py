"""A plain class (a sampler's schedule, not an nn.Module) whose `__init__` sets up tensors: in its
compiled method `self.sigmas[i]` is a 0-d tensor, so testing it branches on a tensor value. An
attribute set to a Python number, for contrast: no break."""
import torch


class Schedule:
    def __init__(self, steps):
        self.sigmas = torch.linspace(1.0, 0.0, steps)
        self.scale = 0.5

    def step(self, x, i: int):
        sigma = self.sigmas[i]
        if sigma > 0.5:  # expect: GM101
            x = x * 2
        if self.scale > 0.25:
            x = x + 1
        return x * sigma


SCHEDULE = Schedule(10)


def sample():
    return [(SCHEDULE.step, (torch.randn(4), 1), {}), (SCHEDULE.step, (torch.randn(4), 8), {})]


GRAPHMEND_CONFIG = {"compiled": ["break_plain_class_tensor_attribute.py:Schedule.step"]}
