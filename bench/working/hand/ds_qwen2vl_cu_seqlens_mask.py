"""Hand rewrite of ds_qwen2vl_cu_seqlens_mask: the block-diagonal mask from per-token (image, frame) ids."""

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

    def forward(self, hidden_states: torch.Tensor, segment_ids: torch.Tensor) -> torch.Tensor:
        seq_length = hidden_states.shape[0]
        q, k, v = self.qkv(hidden_states).reshape(seq_length, 3, self.num_heads, -1).permute(1, 0, 2, 3).unbind(0)

        image_id, frame_id = segment_ids
        attention_mask = (
            (image_id[:, None] == image_id[None, :]) & (frame_id[:, None] == frame_id[None, :])
        ).unsqueeze(0)
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

    def forward(self, hidden_states, segment_ids) -> torch.Tensor:
        hidden_states = hidden_states + self.attn(self.norm1(hidden_states), segment_ids=segment_ids)
        hidden_states = hidden_states + self.mlp(self.norm2(hidden_states))
        return hidden_states


class Qwen2VisionTransformer(nn.Module):
    def __init__(self, patch_dim=6, embed_dim=8, num_heads=2, depth=1):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim, bias=False)
        self.blocks = nn.ModuleList([Qwen2VLVisionBlock(embed_dim, num_heads) for _ in range(depth)])

    def forward(self, hidden_states: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        hidden_states = self.patch_embed(hidden_states)

        frame_len = grid_thw[:, 1] * grid_thw[:, 2]
        image_end = (grid_thw[:, 0] * frame_len).cumsum(0)
        image_start = image_end - grid_thw[:, 0] * frame_len
        pos = torch.arange(hidden_states.shape[0], device=hidden_states.device)
        image_id = (pos[:, None] >= image_end[None, :]).sum(1)
        frame_id = torch.div(pos - image_start[image_id], frame_len[image_id], rounding_mode="floor")

        for blk in self.blocks:
            hidden_states = blk(hidden_states, segment_ids=(image_id, frame_id))

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
