"""Hand rewrite of cases/wk_hf_qwen25omni_vision_split_tolist.py (the fix of transformers PR
#45816): one attention over the packed sequence with a block-diagonal mask from
`torch.searchsorted(cu_seqlens, positions, right=True) - 1`, instead of `split(lengths.tolist())`."""
import torch
import torch.nn as nn

KIND = "tolist-split"
GRAD = True


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


class Qwen2_5OmniVisionAttention(nn.Module):
    def __init__(self, dim=8, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.attention_dropout = 0.0
        self.q = nn.Linear(dim, dim, bias=True)
        self.k = nn.Linear(dim, dim, bias=True)
        self.v = nn.Linear(dim, dim, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, cu_seqlens):
        seq_length = hidden_states.shape[0]
        query_states = self.q(hidden_states).reshape(seq_length, self.num_heads, -1)
        key_states = self.k(hidden_states).reshape(seq_length, self.num_heads, -1)
        value_states = self.v(hidden_states).reshape(seq_length, self.num_heads, -1)

        query_states = query_states.transpose(0, 1).unsqueeze(0)
        key_states = key_states.transpose(0, 1).unsqueeze(0)
        value_states = value_states.transpose(0, 1).unsqueeze(0)

        positions = torch.arange(seq_length, dtype=cu_seqlens.dtype, device=cu_seqlens.device)
        chunk_id = torch.searchsorted(cu_seqlens, positions, right=True) - 1
        same_chunk = chunk_id[:, None] == chunk_id[None, :]
        attention_mask = torch.zeros(seq_length, seq_length, dtype=query_states.dtype)
        attention_mask = attention_mask.masked_fill(~same_chunk, float("-inf"))[None, None]

        attn_output = eager_attention_forward(
            self,
            query_states,
            key_states,
            value_states,
            attention_mask=attention_mask,
            scaling=self.scaling,
            dropout=0.0 if not self.training else self.attention_dropout,
            is_causal=False,
        )[0]

        attn_output = attn_output.reshape(seq_length, -1).contiguous()
        attn_output = self.proj(attn_output)
        return attn_output


def make():
    torch.manual_seed(0)
    return Qwen2_5OmniVisionAttention()


def inputs():
    g = torch.Generator().manual_seed(8)
    h = lambda n: torch.randn(n, 8, generator=g)
    cu = lambda *v: torch.tensor(v, dtype=torch.int32)
    return [
        (h(6), cu(0, 6)),
        (h(6), cu(0, 2, 6)),
        (h(8), cu(0, 4, 8)),
        (h(7), cu(0, 1, 3, 7)),
        (h(5), cu(0, 1, 2, 3, 4, 5)),
        (h(6), cu(0, 3, 3, 6)),
        (h(9), cu(0, 4, 9)),
        (h(4) * 5, cu(0, 2, 4)),
    ]
