"""Qwen3's `_update_causal_mask` on the `flash_attention_2` path: with a KV cache it reads
`attention_mask[:, -1].sum().item()` to refuse right padding, then returns the 2-D mask only if it
contains a zero (`0.0 in attention_mask`), else `None` so that the kernel runs unmasked; the
attention layer that consumes it follows.

Source: https://github.com/huggingface/transformers/pull/37944 ("fix graph break for torch.compile
in attention mask check": "Graph break from Tensor.item()" in `Qwen3Model._update_causal_mask`),
code at https://github.com/huggingface/transformers/blob/v4.51.0/src/transformers/models/qwen3/modeling_qwen3.py
(`Qwen3Model._update_causal_mask`; the same block is copied into Mistral, Mixtral, Qwen2, Phi3).
Reduced: one attention layer; `past_key_values` is a `(past_k, past_v)` pair of tensors; the
flash-attention varlen call is emulated in plain PyTorch (bottom-right causal window, keys masked
by the 2-D mask, padded query rows set to zero as `pad_input` does).

Breaks: `attention_mask[:, -1].sum().item()` (when a cache is passed) and `0.0 in attention_mask`
(`Tensor.__contains__` reads the value). The ValueError for right padding is on the error path.

HAND: the right-padding check moves into a `torch.library.custom_op` with an ORDERED effect that
raises the same ValueError at run time; the mask is always passed to the attention emulation when
one is given (a mask of ones masks nothing, so the `None` shortcut gives the same output).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "item-raise+contains"
GRAD = True


class _Config:
    _attn_implementation = "flash_attention_2"


def _flash_attention_forward(q, k, v, attention_mask):
    # q: (B, H, S, D); k, v: (B, H, T, D) with T >= S; attention_mask: (B, T) or None
    S, T = q.shape[2], k.shape[2]
    q_pos = torch.arange(S) + (T - S)
    allowed = q_pos[:, None] >= torch.arange(T)[None, :]
    allowed = allowed[None, None]
    if attention_mask is not None:
        key_valid = attention_mask[:, None, None, :].bool()
        allowed = allowed & key_valid
        allowed = allowed | ~allowed.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    if attention_mask is not None:
        query_valid = attention_mask[:, T - S:].bool()[:, None, :, None]
        out = torch.where(query_valid, out, torch.zeros_like(out))
    return out


class Qwen3FlashLayer(nn.Module):
    def __init__(self, hidden=8, heads=2):
        super().__init__()
        self.config = _Config()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def _update_causal_mask(self, attention_mask, input_tensor, cache_position, past_key_values,
                            output_attentions=False):
        if self.config._attn_implementation == "flash_attention_2":
            if attention_mask is not None and past_key_values is not None:
                is_padding_right = attention_mask[:, -1].sum().item() != input_tensor.size()[0]
                if is_padding_right:
                    raise ValueError(
                        "You are attempting to perform batched generation with padding_side='right'"
                        " this may lead to unexpected behaviour for Flash Attention version of Qwen3. Make sure to "
                        " call `tokenizer.padding_side  = 'left'` before tokenizing the input. "
                    )
            if attention_mask is not None and 0.0 in attention_mask:
                return attention_mask
            return None
        raise NotImplementedError

    def forward(self, hidden_states, attention_mask=None, past_key_values=None):
        B, S, E = hidden_states.shape
        causal_mask = self._update_causal_mask(attention_mask, hidden_states, None, past_key_values)

        def split(t):
            return t.view(B, S, self.heads, -1).transpose(1, 2)

        q = split(self.q_proj(hidden_states))
        k = split(self.k_proj(hidden_states))
        v = split(self.v_proj(hidden_states))
        if past_key_values is not None:
            k = torch.cat([past_key_values[0], k], dim=2)
            v = torch.cat([past_key_values[1], v], dim=2)
        out = _flash_attention_forward(q, k, v, causal_mask)
        return self.o_proj(out.transpose(1, 2).reshape(B, S, E))


def make():
    torch.manual_seed(0)
    return Qwen3FlashLayer()


def _past(g, B, P):
    return (torch.randn(B, 2, P, 4, generator=g), torch.randn(B, 2, P, 4, generator=g))


def inputs():
    g = torch.Generator().manual_seed(3)
    h = lambda B, S: torch.randn(B, S, 8, generator=g)
    return [
        (h(2, 4),),
        (h(2, 4), torch.ones(2, 4, dtype=torch.long)),
        (h(2, 4), torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])),
        (h(3, 3), torch.tensor([[0, 0, 1], [0, 1, 1], [1, 1, 1]])),
        (h(2, 1), torch.ones(2, 4, dtype=torch.long), _past(g, 2, 3)),
        (h(2, 1), torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]]), _past(g, 2, 3)),
        (h(1, 2), torch.tensor([[0, 1, 1, 1, 1]]), _past(g, 1, 3)),
        (h(2, 2), None, _past(g, 2, 2)),
        (h(1, 3), torch.tensor([[1.0, 1.0, 1.0]])),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(5)
    return [
        (torch.randn(2, 1, 8, generator=g), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]]), _past(g, 2, 3)),
        (torch.randn(1, 2, 8, generator=g), torch.tensor([[1, 1, 0]]), _past(g, 1, 1)),
    ]
