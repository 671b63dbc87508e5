"""A small decoder block with a mixture-of-experts MLP, written the way real model code often is.

Every graph break below is one that real model code contains (most of them are copied in spirit
from Hugging Face transformers). `make demo` runs `graphmend check` on this file and then real
TorchDynamo on `make_sample()`, so you can compare the two.
"""

from __future__ import annotations

import logging
import math

import torch
import torch.nn.functional as F
from torch import nn

logger = logging.getLogger(__name__)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        batch, length, dim = hidden.shape
        q, k, v = self.qkv(hidden).chunk(3, dim=-1)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if mask is not None and not torch.all(mask == 1):
            scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(batch, length, dim))


class MoE(nn.Module):
    def __init__(self, dim: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        flat = hidden.reshape(-1, hidden.shape[-1])
        weights, chosen = torch.topk(F.softmax(self.router(flat), dim=-1), self.top_k, dim=-1)
        expert_mask = F.one_hot(chosen, num_classes=len(self.experts)).permute(2, 1, 0)
        output = torch.zeros_like(flat)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            slot, token = torch.where(expert_mask[expert_idx].squeeze(0))
            update = self.experts[expert_idx](flat[token]) * weights[token, slot, None]
            output.index_add_(0, token, update)
        return output.reshape(hidden.shape)


class Block(nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2, experts: int = 4) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.attention = Attention(dim, heads)
        self.moe = MoE(dim, experts, top_k=2)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        hidden = hidden + self.attention(self.norm1(hidden), mask)
        scale = hidden.abs().max().item()
        if scale > 1e4:
            logger.warning("activations are large: %s", scale)
        hidden = hidden + self.moe(self.norm2(hidden))
        if hidden.isnan().any():
            print("NaN in block output")
        return hidden


def make_sample():
    """The sample factory for runtime confirmation: (callable, args, kwargs)."""
    torch.manual_seed(0)
    model = Block().eval()
    hidden = torch.randn(2, 5, 16)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    return model, (hidden, mask), {}
