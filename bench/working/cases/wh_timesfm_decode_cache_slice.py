"""TimesFM 2.5's `MultiHeadAttention` with its decode cache: during prefill and autoregressive
decoding every layer writes the new keys/values into the preallocated cache at the write position
`start = decode_cache.next_index[0]` with a slice assignment, then attends over the whole cache.

Source: https://github.com/google-research/timesfm/pull/459 ("Each transformer layer writes to its
KV cache with a data-dependent slice: `start = decode_cache.next_index[0]` ...
`decode_cache.key[:, start:end] = key` ... Dynamo can't trace a slice whose index is a runtime
tensor value, so it graph-breaks here -- once per layer"); code from
https://github.com/google-research/timesfm/blob/master/src/timesfm/torch/transformer.py
(`make_attn_mask`, `RotaryPositionalEmbedding`, `_torch_dot_product_attention`, `PerDimScale`,
`MultiHeadAttention`), src/timesfm/torch/normalization.py (`RMSNorm`) and
src/timesfm/torch/util.py (`DecodeCache`). One attention layer (model dims 8, 2 heads) behind a
thin wrapper that passes the keyword arguments under `torch.no_grad()` (as
`src/timesfm/timesfm_2p5/timesfm_2p5_torch.py`'s `decode` does); the RMSNorm / per-dim scales are drawn at random
(they start at zero) so the output is not trivial. The cache is passed in as a `DecodeCache`.

Breaks: `decode_cache.key[:, start:end] = key` -- slicing with a 0-d int tensor calls
`Tensor.item()` (capture_scalar_outputs=False), and dynamo falls back to eager for the frame.

HAND: write the new entries with `index_copy_` along the time axis at
`start + arange(n_patches)` (same values in the cache, same in-place update) instead of the
slice assignment; the write position stays a tensor. For every in-contract call (the cache has
room: `next_index[0] + n_patches <= cache size`) this is the same.
"""
import dataclasses
import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

KIND = "slice-item"


@dataclasses.dataclass(frozen=False)
class DecodeCache:
    """Cache for decoding."""

    next_index: torch.Tensor
    num_masked: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor


class RMSNorm(nn.Module):
    """RMS normalization."""

    def __init__(self, num_features: int, *, epsilon: float = 1e-6):
        super().__init__()
        self.scale = nn.Parameter(torch.zeros(num_features))
        self.num_features = num_features
        self.epsilon = epsilon

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        var = torch.mean(torch.square(inputs), dim=-1, keepdim=True)
        normed_inputs = inputs * torch.rsqrt(var + self.epsilon)
        normed_inputs = normed_inputs * self.scale
        return normed_inputs


def make_attn_mask(
    query_length: int,
    num_all_masked_kv: torch.Tensor,
    query_index_offset: torch.Tensor | None = None,
    kv_length: int = 0,
) -> torch.Tensor:
    """Makes attention mask."""
    if kv_length == 0:
        kv_length = query_length

    q_index = torch.arange(query_length, device=num_all_masked_kv.device)[None, None, :, None]
    if query_index_offset is not None:
        q_index = q_index + query_index_offset[:, None, None, None]
    kv_index = torch.arange(kv_length, device=num_all_masked_kv.device)[None, None, None, :]
    return torch.logical_and(
        q_index >= kv_index,
        kv_index >= num_all_masked_kv[:, None, None, None],
    )


class RotaryPositionalEmbedding(nn.Module):
    """Rotary positional embedding."""

    def __init__(self, embedding_dims: int, min_timescale: float = 1.0, max_timescale: float = 10000.0):
        super().__init__()
        self.embedding_dims = embedding_dims
        self.min_timescale = min_timescale
        self.max_timescale = max_timescale

    def forward(self, inputs: torch.Tensor, position: torch.Tensor | None = None):
        """Generates a JTensor of sinusoids with different frequencies."""
        if self.embedding_dims != inputs.shape[-1]:
            raise ValueError(
                "The embedding dims of the rotary position embedding"
                "must match the hidden dimension of the inputs."
            )
        half_embedding_dim = self.embedding_dims // 2
        fraction = 2 * torch.arange(0, half_embedding_dim, device=inputs.device) / self.embedding_dims
        timescale = (self.min_timescale * (self.max_timescale / self.min_timescale) ** fraction).to(inputs.device)
        if position is None:
            seq_length = inputs.shape[1]
            position = torch.arange(seq_length, dtype=torch.float32, device=inputs.device)[None, :]

        if len(inputs.shape) == 4:
            position = position[..., None, None]
            timescale = timescale[None, None, None, :]
        elif len(inputs.shape) == 3:
            position = position[..., None]
            timescale = timescale[None, None, :]
        else:
            raise ValueError("Inputs must be of rank 3 or 4.")

        sinusoid_inp = position / timescale
        sin = torch.sin(sinusoid_inp)
        cos = torch.cos(sinusoid_inp)
        first_half, second_half = torch.chunk(inputs, 2, dim=-1)
        first_part = first_half * cos - second_half * sin
        second_part = second_half * cos + first_half * sin
        return torch.cat([first_part, second_part], dim=-1)


def _torch_dot_product_attention(query, key, value, mask=None):
    query = query.permute(0, 2, 1, 3)
    key = key.permute(0, 2, 1, 3)
    value = value.permute(0, 2, 1, 3)
    output = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=1.0)
    output = output.permute(0, 2, 1, 3)
    return output


class PerDimScale(nn.Module):
    """Per-dimension scaling."""

    def __init__(self, num_dims: int):
        super().__init__()
        self.num_dims = num_dims
        self.per_dim_scale = nn.Parameter(torch.zeros(num_dims))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale_factor = 1.442695041 / math.sqrt(self.num_dims) * F.softplus(self.per_dim_scale)
        return x * scale_factor


class MultiHeadAttention(nn.Module):
    """Multi-head attention."""

    def __init__(
        self,
        num_heads: int,
        in_features: int,
        *,
        use_per_dim_scale: bool = True,
        use_rotary_position_embeddings: bool = True,
        use_bias: bool = False,
        attention_fn: Callable[..., torch.Tensor] = _torch_dot_product_attention,
        qk_norm: str = "rms",
        fuse_qkv: bool = False,
    ):
        super().__init__()
        self.num_heads = num_heads
        self.in_features = in_features
        self.head_dim = in_features // num_heads
        self.use_bias = use_bias
        self.attention_fn = attention_fn
        self.qk_norm = qk_norm
        self.fuse_qkv = fuse_qkv

        if self.in_features % self.num_heads != 0:
            raise ValueError(
                f"Memory dimension ({self.in_features}) must be divisible by "
                f"'num_heads' heads ({self.num_heads})."
            )

        if self.fuse_qkv:
            self.qkv_proj = nn.Linear(self.in_features, 3 * self.in_features, bias=use_bias)
        else:
            self.query = nn.Linear(self.in_features, self.in_features, bias=use_bias)
            self.key = nn.Linear(self.in_features, self.in_features, bias=use_bias)
            self.value = nn.Linear(self.in_features, self.in_features, bias=use_bias)
        self.out = nn.Linear(self.in_features, self.in_features, bias=use_bias)

        if self.qk_norm == "rms":
            self.query_ln = RMSNorm(self.head_dim)
            self.key_ln = RMSNorm(self.head_dim)
        else:
            self.query_ln = nn.Identity()
            self.key_ln = nn.Identity()

        self.use_rotary_position_embeddings = use_rotary_position_embeddings
        if self.use_rotary_position_embeddings:
            self.rotary_position_embedding = RotaryPositionalEmbedding(embedding_dims=self.head_dim)

        self.use_per_dim_scale = use_per_dim_scale
        if use_per_dim_scale:
            self.per_dim_scale = PerDimScale(num_dims=self.head_dim)

    def forward(
        self,
        inputs_q: torch.Tensor,
        *,
        decode_cache: DecodeCache | None = None,
        patch_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, DecodeCache | None]:
        b, n_patches, _ = inputs_q.shape
        if patch_mask is None:
            patch_mask = torch.zeros(b, n_patches, dtype=torch.bool, device=inputs_q.device)

        if self.fuse_qkv:
            qkv = self.qkv_proj(inputs_q)
            query, key, value = torch.chunk(qkv, 3, dim=-1)
            query = query.view(b, n_patches, self.num_heads, self.head_dim)
            key = key.view(b, n_patches, self.num_heads, self.head_dim)
            value = value.view(b, n_patches, self.num_heads, self.head_dim)
        else:
            query = self.query(inputs_q).view(b, n_patches, self.num_heads, self.head_dim)
            key = self.key(inputs_q).view(b, n_patches, self.num_heads, self.head_dim)
            value = self.value(inputs_q).view(b, n_patches, self.num_heads, self.head_dim)

        if decode_cache is None:
            num_masked = torch.sum(patch_mask.to(torch.int32), dim=-1)
            next_index = torch.zeros_like(num_masked, dtype=torch.int32)
        else:
            num_masked = torch.sum(patch_mask.to(torch.int32), dim=-1) + decode_cache.num_masked
            next_index = decode_cache.next_index.clone()

        if self.use_rotary_position_embeddings:
            position = (
                torch.arange(n_patches, device=inputs_q.device)[None, :]
                + next_index[:, None]
                - num_masked[:, None]
            )
            query = self.rotary_position_embedding(query, position)
            key = self.rotary_position_embedding(key, position)

        query = self.query_ln(query)
        key = self.key_ln(key)

        if self.use_per_dim_scale:
            query = self.per_dim_scale(query)

        if decode_cache is not None:
            _, decode_cache_size, _, _ = decode_cache.value.shape

            start = decode_cache.next_index[0]
            end = start + n_patches

            # Perform a single, vectorized slice assignment for the entire batch.
            # This is vastly more efficient than a Python for-loop.

            decode_cache.key[:, start:end] = key
            decode_cache.value[:, start:end] = value

            key = decode_cache.key
            value = decode_cache.value
            decode_cache.next_index += n_patches
            decode_cache.num_masked = num_masked
            attn_mask = make_attn_mask(
                query_length=n_patches,
                num_all_masked_kv=num_masked,
                query_index_offset=next_index,
                kv_length=decode_cache_size,
            )
        else:
            attn_mask = make_attn_mask(query_length=n_patches, num_all_masked_kv=num_masked)

        x = self.attention_fn(query, key, value, mask=attn_mask)

        x = x.reshape(b, n_patches, self.in_features)
        out = self.out(x)
        return out, decode_cache


class AttentionStep(nn.Module):
    """Calls the layer the way `Transformer.forward` does (keyword arguments), under
    `torch.no_grad()` as `TimesFM_2p5_200M_torch_module.decode` runs prefill and decoding."""

    def __init__(self):
        super().__init__()
        self.attn = MultiHeadAttention(num_heads=2, in_features=8)

    def forward(self, inputs_q, decode_cache, patch_mask):
        with torch.no_grad():
            return self.attn(inputs_q, decode_cache=decode_cache, patch_mask=patch_mask)


def make():
    torch.manual_seed(0)
    m = AttentionStep()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("scale") or name.endswith("per_dim_scale"):
                p.normal_(0.0, 0.5)
    return m.eval()


def _cache(g, b, size, filled, masked):
    key = torch.zeros(b, size, 2, 4)
    value = torch.zeros(b, size, 2, 4)
    if filled:
        key[:, :filled] = torch.randn(b, filled, 2, 4, generator=g)
        value[:, :filled] = torch.randn(b, filled, 2, 4, generator=g)
    return DecodeCache(
        next_index=torch.full((b,), filled, dtype=torch.int32),
        num_masked=torch.full((b,), masked, dtype=torch.int32),
        key=key,
        value=value,
    )


def inputs():
    g = torch.Generator().manual_seed(7)

    def x(b, n):
        return torch.randn(b, n, 8, generator=g)

    def pm(b, n, k=0):
        m = torch.zeros(b, n, dtype=torch.bool)
        m[:, :k] = True
        return m

    return [
        (x(1, 3), _cache(g, 1, 6, 0, 0), pm(1, 3)),            # prefill into an empty cache
        (x(2, 3), _cache(g, 2, 7, 0, 0), pm(2, 3, 1)),         # prefill, first patch masked
        (x(1, 1), _cache(g, 1, 6, 3, 0), pm(1, 1)),            # one decode step after a 3-patch prefill
        (x(2, 2), _cache(g, 2, 8, 4, 1), pm(2, 2)),            # two patches per step, masked history
        (x(1, 1), _cache(g, 1, 6, 5, 0), pm(1, 1)),            # last free slot
        (x(2, 1), _cache(g, 2, 5, 2, 2), pm(2, 1)),
        (x(1, 3), None, pm(1, 3)),                             # no cache (training-style call)
        (x(2, 4), None, pm(2, 4, 2)),                          # no cache, masked prefix
        (x(1, 2), _cache(g, 1, 4, 2, 0), pm(1, 2)),            # fills the cache exactly
    ]
