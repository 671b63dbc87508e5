"""Hand rewrite of cases/wk_hf_qwen3_flash_padding_right_check.py: the right-padding check raises
from a `torch.library.custom_op` with an ORDERED effect (same ValueError), and the 2-D mask is
always handed to the attention (a mask of ones masks nothing)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._library.effects import EffectType

KIND = "item-raise+contains"
GRAD = True

_MSG = (
    "You are attempting to perform batched generation with padding_side='right'"
    " this may lead to unexpected behaviour for Flash Attention version of Qwen3. Make sure to "
    " call `tokenizer.padding_side  = 'left'` before tokenizing the input. "
)

_NS = "wk_qwen3_flash"
if not hasattr(getattr(torch.ops, _NS), "check_padding_right"):

    @torch.library.custom_op(f"{_NS}::check_padding_right", mutates_args=())
    def _check_padding_right(attention_mask: torch.Tensor, batch_size: int) -> None:
        if attention_mask[:, -1].sum().item() != batch_size:
            raise ValueError(_MSG)

    @_check_padding_right.register_fake
    def _(attention_mask, batch_size):
        return None

    _check_padding_right.register_effect(EffectType.ORDERED)


class _Config:
    _attn_implementation = "flash_attention_2"


def _flash_attention_forward(q, k, v, attention_mask):
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
                getattr(torch.ops, _NS).check_padding_right(attention_mask, input_tensor.size()[0])
            return attention_mask
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
