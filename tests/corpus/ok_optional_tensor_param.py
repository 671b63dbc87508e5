"""An Optional tensor parameter checked with `is not None` is a trace-time constant: no break."""
from typing import Optional

import torch
from torch import nn


class Attention(nn.Module):
    def forward(self, scores: torch.Tensor, mask: Optional[torch.Tensor] = None):
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(dim=-1)


def sample():
    m = torch.compile(Attention())
    mask = torch.tensor([[False, True], [False, False]])
    return [(m, (torch.randn(2, 2),), {}), (m, (torch.randn(2, 2),), {"mask": mask})]
