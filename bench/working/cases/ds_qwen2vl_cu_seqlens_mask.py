"""Qwen2-VL vision tower: per-frame block-diagonal attention mask built from `cu_seqlens`.

Source: https://github.com/huggingface/transformers/blob/v4.45.0/src/transformers/models/qwen2_vl/modeling_qwen2_vl.py
(`Qwen2VisionTransformerPretrainedModel.forward`, `VisionSdpaAttention.forward`, `Qwen2VLVisionBlock`).
Reduced: linear patch embedding, one block, no rotary embedding and no patch merger.

Breaks: `torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0])` (repeats read from
a tensor, no `output_size`: dynamic output shape), then the mask loop over `len(cu_seqlens)` that
slices with tensor bounds.

HAND: the same mask from per-token ids: a token's image is the number of image ends at or before
it (`grid_thw.shape[0]` images, a static count) and its frame is `(pos - image_start) // (h * w)`;
two tokens attend to each other iff image and frame are equal. No data-dependent size is needed
because the sequence length is `hidden_states.shape[0]`.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "repeat-interleave"
GRAD = True


class VisionSdpaAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int = 16) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        seq_length = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).reshape(seq_length, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)

        attention_mask = torch.zeros([1, seq_length, seq_length], device=q.device, dtype=torch.bool)
        for i in range(1, len(cu_seqlens)):
            attention_mask[..., cu_seqlens[i - 1] : cu_seqlens[i], cu_seqlens[i - 1] : cu_seqlens[i]] = True
        q = q.transpose(0, 1)
        k = k.transpose(0, 1)
        v = v.transpose(0, 1)
        attn_output = F.scaled_dot_product_attention(q, k, v, attention_mask, dropout_p=0.0)
        attn_output = attn_output.transpose(0, 1)
        attn_output = attn_output.reshape(seq_length, -1)
        attn_output = self.proj(attn_output)
        return attn_output


class Qwen2VLVisionBlock(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = VisionSdpaAttention(dim, num_heads=num_heads)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp_ratio), nn.GELU(), nn.Linear(dim * mlp_ratio, dim))

    def forward(self, hidden_states, cu_seqlens) -> torch.Tensor:
        hidden_states = hidden_states + self.attn(self.norm1(hidden_states), cu_seqlens=cu_seqlens)
        hidden_states = hidden_states + self.mlp(self.norm2(hidden_states))
        return hidden_states


class Qwen2VisionTransformer(nn.Module):
    def __init__(self, patch_dim=6, embed_dim=8, num_heads=2, depth=1):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim, bias=False)
        self.blocks = nn.ModuleList([Qwen2VLVisionBlock(embed_dim, num_heads) for _ in range(depth)])

    def forward(self, hidden_states: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        hidden_states = self.patch_embed(hidden_states)

        cu_seqlens = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(
            dim=0, dtype=torch.int32
        )
        cu_seqlens = F.pad(cu_seqlens, (1, 0), value=0)

        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens)

        return hidden_states


def make():
    torch.manual_seed(0)
    return Qwen2VisionTransformer()


def inputs():
    g = torch.Generator().manual_seed(7)
    grids = [
        [[1, 2, 2]],
        [[2, 2, 2]],
        [[1, 2, 2], [1, 1, 3]],
        [[3, 1, 2], [1, 2, 2]],
        [[1, 1, 1]],
        [[2, 1, 3], [2, 2, 1], [1, 1, 2]],
        [[4, 1, 1]],
        [[1, 3, 3], [2, 1, 2]],
    ]
    out = []
    for grid in grids:
        grid_thw = torch.tensor(grid)
        n = int((grid_thw[:, 0] * grid_thw[:, 1] * grid_thw[:, 2]).sum())
        out.append((torch.randn(n, 6, generator=g), grid_thw))
    return out
