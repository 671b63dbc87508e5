"""Hand rewrite of cases/wm_nomic_bert_rotary_is_inference.py: the cos/sin cache is built under
`torch.inference_mode(False)`, so it is never an inference tensor, and the
`self._cos_cached.is_inference()` rebuild test (then always False) is dropped."""
from typing import Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "is-inference"
GRAD = True


def rotate_half(x, interleaved=False):
    if not interleaved:
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    else:
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rotary_emb(x, cos, sin, offset=0, interleaved=False):
    """
    x: (batch_size, seqlen, nheads, headdim)
    cos, sin: (seqlen, rotary_dim / 2) or (batch_size, seqlen, rotary_dim / 2)
    """
    ro_dim = cos.shape[-1] * 2
    assert ro_dim <= x.shape[-1]
    cos, sin = (
        cos[offset : offset + x.shape[1]],
        sin[offset : offset + x.shape[1]],
    )
    cos = (torch.cat([cos, cos], -1) if not interleaved else cos.repeat_interleave(2, -1)).unsqueeze(-2)
    sin = (torch.cat([sin, sin], -1) if not interleaved else sin.repeat_interleave(2, -1)).unsqueeze(-2)
    return torch.cat(
        [x[..., :ro_dim] * cos + rotate_half(x[..., :ro_dim], interleaved) * sin, x[..., ro_dim:]],
        dim=-1,
    )


class NomicBertRotaryEmbedding(nn.Module):
    def __init__(
        self,
        dim: int,
        base=10000.0,
        interleaved=False,
        scale_base=None,
        pos_idx_in_fp32=True,
        device=None,
    ):
        super().__init__()
        self.dim = dim
        self.base = float(base)
        self.pos_idx_in_fp32 = pos_idx_in_fp32
        # Generate and save the inverse frequency buffer (non trainable)
        inv_freq = self._compute_inv_freq(device)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.interleaved = interleaved
        self.scale_base = scale_base
        scale = (
            (torch.arange(0, dim, 2, device=device, dtype=torch.float32) + 0.4 * dim) / (1.4 * dim)
            if scale_base is not None
            else None
        )
        self.register_buffer("scale", scale, persistent=False)

        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None
        self._cos_k_cached = None
        self._sin_k_cached = None

    def _compute_inv_freq(self, device=None):
        return 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=device, dtype=torch.float32) / self.dim))

    def _update_cos_sin_cache(self, seqlen, device=None, dtype=None):
        # Reset the tables if the sequence length has changed,
        # if we're on a new device (possibly due to tracing for instance),
        # or if we're switching from inference mode to training
        if (
            seqlen > self._seq_len_cached
            or self._cos_cached is None
            or self._cos_cached.device != device
            or self._cos_cached.dtype != dtype
        ):
            self._seq_len_cached = seqlen
            # We want fp32 here, not self.inv_freq.dtype, since the model could be loaded in bf16
            # And the output of arange can be quite large, so bf16 would lose a lot of precision.
            # However, for compatibility reason, we add an option to use the dtype of self.inv_freq.
            if self.pos_idx_in_fp32:
                t = torch.arange(seqlen, device=device, dtype=torch.float32)
                # We want fp32 here as well since inv_freq will be multiplied with t, and the output
                # will be large. Having it in bf16 will lose a lot of precision and cause the
                # cos & sin output to change significantly.
                # We want to recompute self.inv_freq if it was not loaded in fp32
                if self.inv_freq.dtype != torch.float32:
                    inv_freq = self._compute_inv_freq(device=device)
                else:
                    inv_freq = self.inv_freq
            else:
                t = torch.arange(seqlen, device=device, dtype=self.inv_freq.dtype)
                inv_freq = self.inv_freq
            # Don't do einsum, it converts fp32 to fp16 under AMP
            # freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            # built outside inference mode: the cache can be saved for backward in training
            with torch.inference_mode(False):
                freqs = torch.outer(t, inv_freq)
                self._cos_cached = torch.cos(freqs).to(dtype)
                self._sin_cached = torch.sin(freqs).to(dtype)

    def forward(
        self,
        qkv: torch.Tensor,
        kv: Optional[torch.Tensor] = None,
        seqlen_offset: Union[int, torch.Tensor] = 0,
        max_seqlen: Optional[int] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        qkv: (batch, seqlen, 3, nheads, headdim) if kv is none,
             else it's just q of shape (batch, seqlen, nheads, headdim)
        """
        seqlen = qkv.shape[1]
        if seqlen > self._seq_len_cached:
            self._update_cos_sin_cache(seqlen, device=qkv.device, dtype=qkv.dtype)
        elif max_seqlen is not None:
            self._update_cos_sin_cache(max_seqlen, device=qkv.device, dtype=qkv.dtype)
        elif isinstance(seqlen_offset, int):
            self._update_cos_sin_cache(seqlen + seqlen_offset, device=qkv.device, dtype=qkv.dtype)

        q_rot = apply_rotary_emb(qkv[:, :, 0], self._cos_cached, self._sin_cached, seqlen_offset, self.interleaved)
        k_rot = apply_rotary_emb(qkv[:, :, 1], self._cos_cached, self._sin_cached, seqlen_offset, self.interleaved)
        return torch.stack((q_rot, k_rot, qkv[:, :, 2]), dim=2)


class NomicBertAttention(nn.Module):
    def __init__(self, n_embd=8, n_head=2, rotary_emb_base=1000, rotary_emb_interleaved=False):
        super().__init__()
        self.embed_dim = n_embd
        self.num_heads = n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.rotary_emb_dim = self.head_dim
        self.rotary_emb = NomicBertRotaryEmbedding(
            dim=self.rotary_emb_dim, base=rotary_emb_base, interleaved=rotary_emb_interleaved
        )
        self.Wqkv = nn.Linear(self.embed_dim, 3 * self.embed_dim)
        self.out_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.drop = nn.Dropout(0.0)

    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None):
        past_len = 0
        qkv = self.Wqkv(hidden_states)
        qkv = qkv.unflatten(-1, (3, self.num_heads, self.head_dim))

        if self.rotary_emb_dim > 0:
            qkv = self.rotary_emb(qkv, seqlen_offset=past_len)

        query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]

        query = query.permute(0, 2, 1, 3)
        key = key.permute(0, 2, 1, 3)
        value = value.permute(0, 2, 1, 3)
        attn_output = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=self.drop.p, is_causal=False
        )
        attn_output = attn_output.permute(0, 2, 1, 3).flatten(-2)
        attn_output = self.out_proj(attn_output)
        return attn_output


def make():
    torch.manual_seed(0)
    layer = NomicBertAttention()
    layer.eval()
    with torch.inference_mode():
        layer(torch.randn(2, 6, 8))  # builds a 6-row cos/sin cache of inference tensors
    return layer.train()


def _pad_mask(lengths, S):
    keep = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]
    return torch.zeros(len(lengths), 1, 1, S).masked_fill(~keep[:, None, None, :], float("-inf"))


def inputs():
    g = torch.Generator().manual_seed(7)
    h = lambda B, S: torch.randn(B, S, 8, generator=g)
    return [
        (h(2, 5),),  # cache is an inference tensor: rebuilt
        (h(1, 6),),
        (h(2, 4), _pad_mask([4, 2], 4)),
        (h(1, 9),),  # grows the cache
        (h(3, 3),),
        (h(2, 9), _pad_mask([9, 5], 9)),
        (h(1, 1),),
        (h(2, 7),),
    ]
