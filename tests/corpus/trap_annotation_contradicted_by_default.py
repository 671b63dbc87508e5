"""`output_attentions: Optional[torch.Tensor] = False`, a slip copied through real model code
(transformers' fastspeech2_conformer): the default says bool, so `if not output_attentions` is a
Python test and does not break."""
from typing import Optional

import torch
from torch import nn


class Attention(nn.Module):
    def forward(self, hidden: torch.Tensor, output_attentions: Optional[torch.Tensor] = False):
        weights = torch.softmax(hidden @ hidden.transpose(-1, -2), dim=-1)
        output = weights @ hidden
        if not output_attentions:
            weights = None
        return output, weights


def sample():
    return Attention(), (torch.randn(2, 3, 4),), {}
