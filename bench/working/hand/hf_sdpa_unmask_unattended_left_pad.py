"""Hugging Face's SDPA attention-mask preparation for a left-padded prefill: the 4-d causal+padding
mask is built, then `_unmask_unattended` un-masks the rows of the padding queries that attend to
nothing (they make SDPA's memory-efficient kernel return NaN, pytorch/pytorch#110213), using the
index of each row's first real token.

Source: https://github.com/huggingface/transformers/blob/v4.36.0/src/transformers/modeling_attn_mask_utils.py
(`AttentionMaskConverter.to_4d`, `_make_causal_mask`, `_expand_mask`, `_unmask_unattended`; its
comment says "_unmask_unattended does not work either with torch.compile when using
fullgraph=True"), used by the Llama SDPA attention of the same release (reduced to one head
group, prefill only: no past key values).

Breaks: `torch.where(indices > 0)[0]` (nonzero: dynamic shape), the branch
`left_masked_rows.shape[0] == 0`, `torch.arange(max_len)` with `max_len = torch.max(indices)`, and
the boolean-mask assignment `range_tensor[range_tensor >= indices] = 0`.

HAND: the form transformers itself adopted later (v4.38+): multiply the mask by
`~torch.all(expanded_mask == min_dtype, dim=-1, keepdim=True)` -- for a causal prefill mask the rows
that attend to nothing are exactly the rows before a sequence's first real token, which the
original sets to 0 (a masked entry becomes -0.0 instead of 0.0, equal as a value).
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


class AttentionMaskConverter:
    def __init__(self, is_causal: bool, sliding_window: Optional[int] = None):
        self.is_causal = is_causal
        self.sliding_window = sliding_window

    def to_4d(
        self,
        attention_mask_2d: torch.Tensor,
        query_length: int,
        dtype: torch.dtype,
        key_value_length: Optional[int] = None,
    ) -> torch.Tensor:
        input_shape = (attention_mask_2d.shape[0], query_length)

        # create causal mask
        # [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
        causal_4d_mask = None
        if (input_shape[-1] > 1 or self.sliding_window is not None) and self.is_causal:
            if key_value_length is None:
                raise ValueError(
                    "This attention mask converter is causal. Make sure to pass `key_value_length` to correctly create a causal mask."
                )

            past_key_values_length = key_value_length - query_length
            causal_4d_mask = self._make_causal_mask(
                input_shape,
                dtype,
                device=attention_mask_2d.device,
                past_key_values_length=past_key_values_length,
            )

        # [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
        expanded_attn_mask = self._expand_mask(attention_mask_2d, dtype, tgt_len=input_shape[-1]).to(
            attention_mask_2d.device
        )
        if causal_4d_mask is not None:
            expanded_attn_mask = causal_4d_mask.masked_fill(expanded_attn_mask.bool(), torch.finfo(dtype).min)

        # expanded_attn_mask + causal_4d_mask can cause some overflow
        expanded_4d_mask = expanded_attn_mask

        return expanded_4d_mask

    @staticmethod
    def _make_causal_mask(
        input_ids_shape: torch.Size,
        dtype: torch.dtype,
        device: torch.device,
        past_key_values_length: int = 0,
    ):
        """
        Make causal mask used for bi-directional self-attention.
        """
        bsz, tgt_len = input_ids_shape
        mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
        mask_cond = torch.arange(mask.size(-1), device=device)
        mask.masked_fill_(mask_cond < (mask_cond + 1).view(mask.size(-1), 1), 0)

        mask = mask.to(dtype)

        if past_key_values_length > 0:
            mask = torch.cat([torch.zeros(tgt_len, past_key_values_length, dtype=dtype, device=device), mask], dim=-1)

        return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_key_values_length)

    @staticmethod
    def _expand_mask(mask: torch.Tensor, dtype: torch.dtype, tgt_len: Optional[int] = None):
        """
        Expands attention_mask from `[bsz, seq_len]` to `[bsz, 1, tgt_seq_len, src_seq_len]`.
        """
        bsz, src_len = mask.size()
        tgt_len = tgt_len if tgt_len is not None else src_len

        expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)

        inverted_mask = 1.0 - expanded_mask

        return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)

    @staticmethod
    def _unmask_unattended(expanded_mask: torch.Tensor, min_dtype: float):
        # Rows that attend to nothing (all entries == min_dtype) are fully un-masked.
        if expanded_mask.dtype == torch.bool:
            raise ValueError(
                "AttentionMaskConverter._unmask_unattended expects a float `expanded_mask`, got a BoolTensor."
            )

        return expanded_mask.mul(~torch.all(expanded_mask == min_dtype, dim=-1, keepdim=True))


def _prepare_4d_causal_attention_mask_for_sdpa(
    attention_mask: Optional[torch.Tensor],
    input_shape: Tuple[int, int],
    inputs_embeds: torch.Tensor,
):
    attn_mask_converter = AttentionMaskConverter(is_causal=True)

    key_value_length = input_shape[-1]
    batch_size, query_length = input_shape

    if attention_mask is None:
        return None
    expanded_4d_mask = attn_mask_converter.to_4d(
        attention_mask, input_shape[-1], dtype=inputs_embeds.dtype, key_value_length=key_value_length
    )
    # From PyTorch 2.1 onwards, F.scaled_dot_product_attention with the memory-efficient attention backend
    # produces nans if sequences are completely unattended in the attention mask. Details: https://github.com/pytorch/pytorch/issues/110213
    if query_length > 1:
        expanded_4d_mask = AttentionMaskConverter._unmask_unattended(
            expanded_4d_mask, torch.finfo(inputs_embeds.dtype).min
        )

    return expanded_4d_mask


class SdpaSelfAttention(nn.Module):
    def __init__(self, hidden=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, inputs_embeds, attention_mask):
        bsz, q_len, hidden = inputs_embeds.shape
        causal_mask = _prepare_4d_causal_attention_mask_for_sdpa(attention_mask, (bsz, q_len), inputs_embeds)
        q, k, v = self.qkv(inputs_embeds).view(bsz, q_len, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=causal_mask, is_causal=causal_mask is None and q_len > 1
        )
        out = self.o_proj(out.transpose(1, 2).reshape(bsz, q_len, hidden))
        return out, causal_mask


def make():
    torch.manual_seed(0)
    return SdpaSelfAttention()


def inputs():
    g = torch.Generator().manual_seed(31)
    calls = []
    for pads, L in [
        ([2, 0, 1], 5),      # the docstring's example: left padding of 2 and 1
        ([0, 0, 0], 5),      # no padding
        ([0, 0], 1),         # a single query position: no unmasking
        ([3, 3], 6),
        ([0, 4, 1, 0], 6),
        ([1], 4),
        ([0, 2], 3),
        ([5, 0], 7),
    ]:
        x = torch.randn(len(pads), L, 16, generator=g)
        m = torch.ones(len(pads), L, dtype=torch.long)
        for b, p in enumerate(pads):
            m[b, :p] = 0
        calls.append((x, m))
    calls.append((torch.randn(2, 4, 16, generator=g), None))
    return calls


KIND = "dynamic-shape"
GRAD = True
