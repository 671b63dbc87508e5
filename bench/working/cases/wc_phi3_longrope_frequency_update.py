"""Phi-3 (128k / Phi-3.5 / Phi-4-mini) rotary embedding with LongRoPE: before every rotary forward,
transformers' `dynamic_rope_update` decorator takes `seq_len = torch.max(position_ids) + 1` and
switches the inverse frequencies between the long and the short rescaling factors with
`if seq_len > original_max_position_embeddings:` (creating the long table lazily and re-registering
the `inv_freq` buffer). Reported as the Phi3 graph-break regression of transformers 4.48; the
maintainers answered that there is no easy fix because the branch is on `torch.max(position_ids)`.

Source: https://github.com/huggingface/transformers/issues/35716 (Phi3 has graph breaks in 4.48),
https://github.com/tenstorrent/tt-forge-models/pull/594 ("Phi 3.5 mini has graph breaks, because
of the way long rope rescaling is implemented in huggingface"), code from
https://github.com/huggingface/transformers/blob/main/src/transformers/modeling_rope_utils.py
(`dynamic_rope_update.longrope_frequency_update`, `_compute_longrope_parameters`) and
src/transformers/models/phi3/modeling_phi3.py (`Phi3RotaryEmbedding`, `apply_rotary_pos_emb`).
Reduced to one attention layer (2 heads of dim 8, original context 8, maximum 32).

Breaks: `if seq_len > original_max_position_embeddings:` (data-dependent branching on a 0-d tensor).

HAND: both frequency tables exist (the long table, a pure function of the config, is built in
`__init__` instead of on the first long sequence) and the buffer is refreshed in place with
`torch.where(seq_len > original_max_position_embeddings, long_inv_freq, original_inv_freq)`.
"""
import math
import types

import torch
import torch.nn.functional as F
from torch import nn

KIND = "branch"
GRAD = True


def _compute_longrope_parameters(config, device, seq_len=None):
    base = config.rope_theta
    dim = config.hidden_size // config.num_attention_heads
    long_factor = config.rope_scaling["long_factor"]
    short_factor = config.rope_scaling["short_factor"]
    original_max_position_embeddings = config.original_max_position_embeddings
    factor = config.max_position_embeddings / config.original_max_position_embeddings
    if factor <= 1.0:
        attention_factor = 1.0
    else:
        attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))

    if seq_len and seq_len > original_max_position_embeddings:
        ext_factors = torch.tensor(long_factor, dtype=torch.float32, device=device)
    else:
        ext_factors = torch.tensor(short_factor, dtype=torch.float32, device=device)
    inv_freq_shape = torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim
    inv_freq = 1.0 / (ext_factors * base**inv_freq_shape)
    return inv_freq, attention_factor


def dynamic_rope_update(rope_forward):
    def longrope_frequency_update(self, position_ids, device):
        """Longrope uses long factor if sequence is larger than original pretraining length, short otherwise."""
        seq_len = torch.max(position_ids) + 1
        if hasattr(self.config, "original_max_position_embeddings"):
            original_max_position_embeddings = self.config.original_max_position_embeddings
        else:
            original_max_position_embeddings = self.config.max_position_embeddings
        if seq_len > original_max_position_embeddings:
            if not hasattr(self, "long_inv_freq"):
                self.long_inv_freq, _ = self.rope_init_fn(
                    self.config, device, seq_len=original_max_position_embeddings + 1
                )
            self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
        else:
            # This .to() is needed if the model has been moved to a device after being initialized
            self.original_inv_freq = self.original_inv_freq.to(device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)

    def wrapper(self, x, position_ids):
        if self.rope_type == "longrope":
            longrope_frequency_update(self, position_ids, device=x.device)
        return rope_forward(self, x, position_ids)

    return wrapper


class Phi3RotaryEmbedding(nn.Module):
    def __init__(self, config, device=None):
        super().__init__()
        self.rope_type = config.rope_scaling.get("rope_type", config.rope_scaling.get("type"))
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.max_position_embeddings
        self.config = config
        self.rope_init_fn = _compute_longrope_parameters
        inv_freq, self.attention_scaling = self.rope_init_fn(self.config, device)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq

    @torch.no_grad()
    @dynamic_rope_update
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class Phi3AttentionBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.qkv_proj = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.rotary_emb = Phi3RotaryEmbedding(config)

    def forward(self, hidden_states, position_ids):
        bsz, q_len, _ = hidden_states.shape
        cos, sin = self.rotary_emb(hidden_states, position_ids)
        qkv = self.qkv_proj(hidden_states)
        q, k, v = qkv.view(bsz, q_len, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        attn = attn.transpose(1, 2).reshape(bsz, q_len, -1)
        return self.o_proj(attn)


CONFIG = types.SimpleNamespace(
    hidden_size=16,
    num_attention_heads=2,
    rope_theta=10000.0,
    max_position_embeddings=32,
    original_max_position_embeddings=8,
    rope_scaling={
        "type": "longrope",
        "short_factor": [1.0, 1.02, 1.05, 1.1],
        "long_factor": [1.0, 1.9, 5.4, 15.7],
    },
)


def make():
    torch.manual_seed(0)
    return Phi3AttentionBlock(CONFIG)


def inputs():
    torch.manual_seed(0)

    def pos(start, length, bsz=1):
        return torch.arange(start, start + length).unsqueeze(0).expand(bsz, -1).contiguous()

    h = lambda bsz, n: torch.randn(bsz, n, 16)
    return [
        (h(1, 4), pos(0, 4)),                   # short prompt
        (h(2, 8), pos(0, 8, 2)),                # exactly the original context: short factors
        (h(1, 9), pos(0, 9)),                   # one past it: long factors (long table created)
        (h(2, 12), pos(0, 12, 2)),              # long
        (h(1, 3), pos(2, 3)),                   # back to short (buffer re-registered)
        (h(1, 1), pos(20, 1)),                  # one decode step far into the context: long
        (h(2, 5), torch.tensor([[0, 1, 2, 3, 4], [4, 5, 6, 7, 8]])),  # one row past: long
        (h(1, 6), pos(2, 6)),                   # max position 7: short
        (h(1, 2), pos(30, 2)),                  # the end of the maximum context: long
    ]
