"""A gated MLP block whose graph breaks `graphmend fix` can all remove without changing a value.

`make demo` shows the diff; `bench/fix_examples.py` counts graphs before and after with real
TorchDynamo and compares outputs. Each pattern is common in model code: a soft cap applied only
when activations run large, an activation chosen by a data-dependent test, a scale taken out with
`.item()` only to divide by it, and a mean over a boolean mask.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GatedMLP(nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.gate = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        if h.abs().max() > 3.0:
            h = 3.0 * torch.tanh(h / 3.0)
        up = self.up(h)
        gate = self.gate(h)
        if gate.mean() > 0:
            activated = F.gelu(gate) * up
        else:
            activated = F.silu(gate) * up
        out = self.down(activated)
        scale = out.abs().mean().item()
        out = out / scale
        positive = out[out > 0].mean()
        return x + out - positive


def make_sample():
    """The sample factory for runtime confirmation: (callable, args, kwargs)."""
    torch.manual_seed(0)
    model = GatedMLP().eval()
    return model, (torch.randn(2, 5, 16) * 3,), {}
