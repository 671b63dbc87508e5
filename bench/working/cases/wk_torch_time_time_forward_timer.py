"""A forward that times itself with `time.time()`: the pattern of the issue's minified repro
(`start_time = time.time()` inside a compiled function), here around a small MLP block whose
elapsed wall-clock time is kept on the module for later reporting.

Source: https://github.com/pytorch/pytorch/issues/137068 ("UserWarning: Graph break due to
unsupported builtin time.time"; repro `def debug(): start_time = time.time()` under
`torch.compile`). The same pattern is why TorchRL added compile-aware timing helpers that return a
`nullcontext` while compiling (https://github.com/pytorch/rl/pull/3297).

Breaks: both `time.time()` calls (a C builtin that dynamo skips).

HAND: none — the elapsed time is a Python float read from the host clock around the module's work;
reading the clock from inside the graph (a custom op) would return a tensor and time something else.
"""
import time

import torch
import torch.nn as nn

KIND = "builtin-time"
GRAD = True


class TimedBlock(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.last_forward_seconds = 0.0

    def forward(self, x):
        start_time = time.time()
        h = self.fc2(torch.relu(self.fc1(self.norm(x))))
        out = x + h
        self.last_forward_seconds = time.time() - start_time
        return out


def make():
    torch.manual_seed(0)
    return TimedBlock()


def inputs():
    g = torch.Generator().manual_seed(1)
    return [
        (torch.randn(2, 6, generator=g),),
        (torch.randn(1, 6, generator=g),),
        (torch.randn(3, 4, 6, generator=g),),
        (torch.zeros(2, 6),),
        (torch.randn(5, 6, generator=g) * 100,),
        (torch.full((1, 6), 3.0),),
        (torch.randn(2, 2, 2, 6, generator=g),),
        (torch.randn(4, 6, generator=g) - 2,),
    ]
