"""Hand rewrite of cases/wb_rotary_embedding_cache_item.py: the cached length is a plain Python int
(as upstream commit 37fdab4 "Change cached seq_len from buffer to plain int" did)."""

from math import pi

import torch
import torch.nn.functional as F
from torch import nn, einsum, Tensor

KIND = "item"
GRAD = True


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def slice_at_dim(t, dim_slice: slice, *, dim):
    dim += (t.ndim if dim < 0 else 0)
    colons = [slice(None)] * t.ndim
    colons[dim] = dim_slice
    return t[tuple(colons)]


def rotate_half(x):
    x = x.unflatten(-1, (-1, 2))                     # '... (d r) -> ... d r', r = 2
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)                             # '... d r -> ... (d r)'


def apply_rotary_emb(freqs, t, start_index=0, scale=1., seq_dim=-2, freqs_seq_dim=None):
    dtype = t.dtype

    if not exists(freqs_seq_dim):
        if freqs.ndim == 2 or t.ndim == 3:
            freqs_seq_dim = 0

    if t.ndim == 3 or exists(freqs_seq_dim):
        seq_len = t.shape[seq_dim]
        freqs = slice_at_dim(freqs, slice(-seq_len, None), dim=freqs_seq_dim)

    rot_dim = freqs.shape[-1]
    end_index = start_index + rot_dim

    assert rot_dim <= t.shape[-1], f'feature dimension {t.shape[-1]} is not of sufficient size to rotate in all the positions {rot_dim}'

    t_left = t[..., :start_index]
    t_middle = t[..., start_index:end_index]
    t_right = t[..., end_index:]

    t_transformed = (t_middle * freqs.cos() * scale) + (rotate_half(t_middle) * freqs.sin() * scale)

    out = torch.cat((t_left, t_transformed, t_right), dim=-1)

    return out.type(dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, freqs_for='lang', theta=10000, max_freq=10, learned_freq=False,
                 interpolate_factor=1., seq_before_head_dim=False, cache_if_possible=True,
                 cache_max_seq_len=8192):
        super().__init__()
        self.freqs_for = freqs_for

        if freqs_for == 'lang':
            freqs = 1. / (theta ** (torch.arange(0, dim, 2)[:(dim // 2)].float() / dim))
        elif freqs_for == 'pixel':
            freqs = torch.linspace(1., max_freq / 2, dim // 2) * pi

        self.cache_if_possible = cache_if_possible
        self.cache_max_seq_len = cache_max_seq_len

        self.register_buffer('cached_freqs', torch.zeros(cache_max_seq_len, dim), persistent=False)
        self.cached_freqs_seq_len = 0

        self.freqs = nn.Parameter(freqs, requires_grad=learned_freq)
        self.learned_freq = learned_freq

        self.default_seq_dim = -3 if seq_before_head_dim else -2

        assert interpolate_factor >= 1.
        self.interpolate_factor = interpolate_factor

    def get_seq_pos(self, seq_len, device, dtype, offset=0):
        return (torch.arange(seq_len, device=device, dtype=dtype) + offset) / self.interpolate_factor

    def rotate_queries_or_keys(self, t, seq_dim=None, offset=0, scale=None):
        seq_dim = default(seq_dim, self.default_seq_dim)

        device, dtype, seq_len = t.device, t.dtype, t.shape[seq_dim]

        seq = self.get_seq_pos(seq_len, device=device, dtype=dtype, offset=offset)

        freqs = self.forward(seq, seq_len=seq_len, offset=offset)

        if seq_dim == -3:
            freqs = freqs.unsqueeze(-2)              # 'n d -> n 1 d'

        return apply_rotary_emb(freqs, t, scale=default(scale, 1.), seq_dim=seq_dim)

    def forward(self, t: Tensor, seq_len=None, offset=0):
        should_cache = (
            self.cache_if_possible and
            not self.learned_freq and
            exists(seq_len) and
            self.freqs_for != 'pixel' and
            (offset + seq_len) <= self.cache_max_seq_len
        )

        if (
            should_cache and \
            exists(self.cached_freqs) and \
            (offset + seq_len) <= self.cached_freqs_seq_len
        ):
            return self.cached_freqs[offset:(offset + seq_len)].detach()

        freqs = self.freqs

        freqs = einsum('..., f -> ... f', t.type(freqs.dtype), freqs)
        freqs = freqs.unsqueeze(-1).expand(*freqs.shape, 2).flatten(-2)   # '... n -> ... (n r)', r = 2

        if should_cache and offset == 0:
            self.cached_freqs[:seq_len] = freqs.detach()
            self.cached_freqs_seq_len = seq_len

        return freqs


class Attention(nn.Module):
    def __init__(self, dim=16, heads=2, dim_head=8, rotary_dim=4, cache_max_seq_len=16):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, heads * dim_head * 3, bias=False)
        self.to_out = nn.Linear(heads * dim_head, dim)
        self.rotary_emb = RotaryEmbedding(dim=rotary_dim, cache_max_seq_len=cache_max_seq_len)

    def forward(self, x, offset=0):
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.heads, -1)).transpose(1, 2) for t in (q, k, v))  # b h n d

        q = self.rotary_emb.rotate_queries_or_keys(q, offset=offset)
        k = self.rotary_emb.rotate_queries_or_keys(k, offset=offset)

        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.to_out(out.transpose(1, 2).flatten(2))


def make():
    torch.manual_seed(0)
    return Attention()


def inputs():
    g = torch.Generator().manual_seed(2)
    x = lambda b, n: torch.randn(b, n, 16, generator=g)
    # the calls run in this order on one module, so the cache fills and is hit along the way
    return [
        (x(2, 6),),           # cache empty: computed, cached length 6
        (x(1, 4),),           # hit
        (x(2, 3), 2),         # offset 2: 5 <= 6, hit
        (x(1, 8),),           # miss: recomputed, cached length 8
        (x(1, 6), 4),         # offset 4: 10 > 8, miss, not cached (offset != 0)
        (x(1, 20),),          # longer than cache_max_seq_len: never cached, no .item()
        (x(2, 8), 8),         # 16 <= 16 but > 8: miss
        (x(1, 1), 7),         # one decoding step at position 7: hit
        (x(3, 16),),          # fills the whole cache
        (x(1, 2), 14),        # hit at the end of the cache
    ]
