"""torchtune's cross-attention decoder layer (Llama 3.2 Vision) during decoding: when no encoder input
is passed, the layer is skipped iff its KV cache is empty, and the cache's size is the property
`KVCache.size`, which reads `self.cache_pos[0].item()`.

Source: https://github.com/pytorch/torchtune/blob/main/torchtune/modules/transformer.py
(`TransformerCrossAttentionLayer.forward`, `_skip_mask`),
https://github.com/pytorch/torchtune/blob/main/torchtune/modules/kv_cache.py (`KVCache`),
https://github.com/pytorch/torchtune/blob/main/torchtune/modules/attention.py
(`MultiHeadAttention.forward`, reduced: no positional embeddings / q-k norms); the step runs under
`torch.no_grad()` as torchtune/generation/_generation.py's `generate` does.

Breaks: `self.attn.kv_cache.size == 0` -- `Tensor.item()` inside the `size` property, then a branch
on the Python int. (The cache's own `assert (self.cache_pos[0] + seq_len) <= ...` does not break
on torch 2.13: dynamo turns it into a runtime assertion, see NOTES.md.)

HAND: keep the test as a 0-d tensor (`cache_pos[0] == 0`); when `encoder_input is None` run the layer
on the (empty or filled) cache anyway and return `torch.where(empty_cache, x, out)` -- on an empty
cache the attention reads zeros, which is finite, so the selected values are the original's.
"""
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


class KVCache(nn.Module):
    """
    Standalone ``nn.Module`` containing a kv-cache to cache past key and values during inference.
    """

    def __init__(
        self,
        batch_size: int,
        max_seq_len: int,
        num_kv_heads: int,
        head_dim: int,
        dtype: torch.dtype,
    ) -> None:
        super().__init__()
        cache_shape = (batch_size, num_kv_heads, max_seq_len, head_dim)
        self.register_buffer(
            "k_cache", torch.zeros(cache_shape, dtype=dtype), persistent=False
        )
        self.register_buffer(
            "v_cache", torch.zeros(cache_shape, dtype=dtype), persistent=False
        )
        self.register_buffer(
            "cache_pos", torch.arange(0, cache_shape[2]), persistent=False
        )
        self.batch_size = batch_size

    def reset(self) -> None:
        """Reset the cache to zero."""
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.cache_pos -= self.size

    @property
    def size(self) -> int:
        return self.cache_pos[0].item()

    def update(
        self, k_val: torch.Tensor, v_val: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        bsz, _, seq_len, _ = k_val.shape
        if bsz > self.k_cache.shape[0]:
            raise ValueError(
                f"The current cache has been setup with a batch size of {self.k_cache.shape[0]}"
                f", but found new key tensors with batch size {k_val.shape[0]}!"
            )

        assert (self.cache_pos[0] + seq_len) <= self.k_cache.shape[2]
        k_out = self.k_cache
        v_out = self.v_cache

        k_out[:, :, self.cache_pos[:seq_len]] = k_val
        v_out[:, :, self.cache_pos[:seq_len]] = v_val

        # forward cache_pos seq_len positions along
        self.cache_pos.add_(seq_len)

        return k_out, v_out


def _sdpa_call(q, k, v, mask, dropout_p, is_causal):
    # shape: [b, 1, s, s]
    if mask is not None:
        mask = mask[:, None, :, :]
    return F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal
    )


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, num_kv_heads, head_dim, kv_cache=None, is_causal=True, attn_dropout=0.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.embed_dim = embed_dim
        self.attn_dropout = attn_dropout
        self.head_dim = head_dim
        self.is_causal = is_causal
        self.kv_cache = kv_cache
        self.cache_enabled = kv_cache is not None
        self.q_proj = nn.Linear(embed_dim, num_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, num_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, num_kv_heads * head_dim, bias=False)
        self.output_proj = nn.Linear(num_heads * head_dim, embed_dim, bias=False)
        self._attention_call = _sdpa_call

    def forward(self, x: torch.Tensor, y: Optional[torch.Tensor] = None, *, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        b, s_x, _ = x.shape
        s_y = y.shape[1] if y is not None else 0

        q = self.q_proj(x)
        q_per_kv = self.num_heads // self.num_kv_heads
        q = q.view(b, s_x, self.num_kv_heads * q_per_kv, self.head_dim)
        q = q.transpose(1, 2)

        if y is None:
            if self.kv_cache is None or not self.cache_enabled:
                raise ValueError(
                    "Must provide y input or use kv_cache to enable streaming decoding"
                )
            k = self.kv_cache.k_cache
            v = self.kv_cache.v_cache
        else:
            k = self.k_proj(y)
            v = self.v_proj(y)
            k = k.view(b, s_y, -1, self.head_dim)
            v = v.view(b, s_y, -1, self.head_dim)
            k = k.transpose(1, 2)
            v = v.transpose(1, 2)

            # Update key-value cache
            if self.kv_cache is not None and self.cache_enabled:
                k, v = self.kv_cache.update(k, v)

        if self.num_heads != self.num_kv_heads:
            expand_shape = (b, self.num_kv_heads, q_per_kv, -1, self.head_dim)
            k = k.unsqueeze(2).expand(expand_shape).flatten(1, 2)
            v = v.unsqueeze(2).expand(expand_shape).flatten(1, 2)

        output = self._attention_call(
            q,
            k,
            v,
            mask=mask,
            dropout_p=self.attn_dropout if self.training else 0.0,
            is_causal=self.kv_cache is None and mask is None and self.is_causal,
        )

        output = output.transpose(1, 2).contiguous().view(b, s_x, -1)
        return self.output_proj(output)


class MLP(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


class TransformerCrossAttentionLayer(nn.Module):
    def __init__(self, attn, mlp, *, ca_norm=None, mlp_norm=None, ca_scale=None, mlp_scale=None) -> None:
        super().__init__()
        self.attn = attn
        self.mlp = mlp
        self.ca_norm = ca_norm or nn.Identity()
        self.mlp_norm = mlp_norm or nn.Identity()
        self.ca_scale = ca_scale or nn.Identity()
        self.mlp_scale = mlp_scale or nn.Identity()

    def caches_are_enabled(self) -> bool:
        return self.attn.cache_enabled

    def _skip_mask(self, mask: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        # no skip_mask if no masking
        if mask is None:
            return None
        # negate mask and convert to boolean mask
        if mask.dtype == torch.bool:
            mask = ~mask
        else:
            mask = torch.isneginf(mask)
        # True where all elements in a row are True
        mask = torch.all(mask, dim=-1, keepdim=True)
        return mask

    def forward(
        self,
        x: torch.Tensor,
        *,
        encoder_input: Optional[torch.Tensor] = None,
        encoder_mask: Optional[torch.Tensor] = None,
        **kwargs: dict,
    ) -> torch.Tensor:
        # During decoding, it's possible encoder_input is None because the embeds
        # are already stored in the kv cache.
        empty_cache = not self.caches_are_enabled() or self.attn.kv_cache.size == 0
        # Skip cross attention when no secondary input as it's primary purpose
        # is to attend between x and encoder_input.
        if encoder_input is None and empty_cache:
            return x

        # A mask of tokens (x) with no encoder_input
        skip_mask = self._skip_mask(encoder_mask)
        if encoder_mask is not None:
            # This unmasks the skipped rows to avoid NaNs in SDPA Softmax backward
            encoder_mask = encoder_mask.masked_fill(skip_mask, True)

        attn_out = self.attn(self.ca_norm(x), encoder_input, mask=encoder_mask)
        if skip_mask is not None:
            attn_out = attn_out.masked_fill(skip_mask, 0)

        h = self.ca_scale(attn_out) + x

        mlp_out = self.mlp(self.mlp_norm(h))
        if skip_mask is not None:
            mlp_out = mlp_out.masked_fill(skip_mask, 0)

        out = h + self.mlp_scale(mlp_out)
        return out


ENC_LEN = 6


class DecoderStep(nn.Module):
    def __init__(self):
        super().__init__()
        cache = KVCache(batch_size=2, max_seq_len=ENC_LEN, num_kv_heads=2, head_dim=4, dtype=torch.float32)
        attn = MultiHeadAttention(16, num_heads=4, num_kv_heads=2, head_dim=4, kv_cache=cache, is_causal=False)
        self.layer = TransformerCrossAttentionLayer(attn, MLP(16, 32), ca_norm=nn.RMSNorm(16), mlp_norm=nn.RMSNorm(16))

    @torch.no_grad()  # torchtune's `generate` runs decoding under no_grad
    def forward(self, x, encoder_input, encoder_mask):
        return self.layer(x, encoder_input=encoder_input, encoder_mask=encoder_mask)


def make():
    torch.manual_seed(0)
    return DecoderStep().eval()


def inputs():
    g = torch.Generator().manual_seed(3)

    def x(s=1):
        return torch.randn(2, s, 16, generator=g)

    def mask(s, rows_off=()):
        m = torch.rand(2, s, ENC_LEN, generator=g) > 0.3
        m[..., 0] = True
        for b, i in rows_off:
            m[b, i] = False  # this token attends to no image embedding
        return m

    enc = torch.randn(2, ENC_LEN, 16, generator=g)
    return [
        (x(2), None, None),                   # text-only prompt, empty cache: skipped
        (x(1), None, mask(1)),                # still empty: skipped
        (x(3), enc, mask(3, [(0, 1)])),       # image embeddings enter the cache
        (x(1), None, mask(1)),                # decoding from the cache
        (x(1), None, mask(1, [(1, 0)])),
        (x(2), None, None),
        (x(1), None, mask(1)),
        (x(2), None, mask(2, [(0, 0), (1, 1)])),
    ]


KIND = "item-branch"
