"""The transformers check `if attention_mask is not None and not torch.all(attention_mask == 1)` (GM101)."""
import torch
from torch import nn


class Attention(nn.Module):
    def forward(self, scores, attention_mask=None):
        if attention_mask is not None and not torch.all(attention_mask == 1):  # expect: GM101
            scores = scores.masked_fill(attention_mask == 0, float("-inf"))
        return scores.softmax(dim=-1)


def sample():
    return Attention(), (torch.randn(2, 4), torch.tensor([[1, 1, 0, 1], [1, 1, 1, 1]])), {}
