"""Hugging Face MBart encoder in training mode with LayerDrop: for every layer a uniform number is
drawn (`dropout_probability = torch.rand([])`) and the layer is skipped when it is below
`config.encoder_layerdrop`. Transformers draws it with `torch.rand` rather than `random.uniform`
since the report below (Dynamo baked the Python draw into the trace); the comparison of the drawn
0-d tensor with the threshold is then a data-dependent branch in every layer.

Source: https://github.com/pytorch/pytorch/issues/95425 ("torch.compile does not work for layer
drop": "In the huggingface model `MBartForConditionalGeneration` ... layer drop is used"), code at
https://github.com/huggingface/transformers/blob/main/src/transformers/models/mbart/modeling_mbart.py
(`MBartEncoder.forward`, `MBartEncoderLayer.forward`; the same LayerDrop block is in Bart, Whisper,
M2M100, PLBart, Marian ...). Reduced: d_model=8, 2 heads, 4 layers, encoder_layerdrop=0.3, all
dropout probabilities 0.0 (so no other random draw), eager attention with the expanded additive
padding mask, no head mask and no hidden-state/attention outputs; the forward takes
`inputs_embeds` and returns the last hidden state. The harness reseeds before every call, so the
draws, and the layers dropped, are the same in every call (layers 0 and 2 here).

Breaks: `if dropout_probability < self.layerdrop:` (data-dependent branching on a 0-d tensor,
inside the layer loop).

HAND: every layer is computed and the LayerDrop decision selects its input or its output with
`torch.where(to_drop, hidden_states, layer_output)`; the draws are the same (`torch.rand([])` per
layer in the same order) and the layers draw no other random numbers.
"""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "rand-branch-loop"


class MBartConfig:
    d_model = 8
    encoder_attention_heads = 2
    encoder_ffn_dim = 16
    encoder_layers = 4
    encoder_layerdrop = 0.3
    dropout = 0.0
    attention_dropout = 0.0
    activation_dropout = 0.0
    max_position_embeddings = 32
    scale_embedding = True


def _prepare_4d_attention_mask(mask, dtype, tgt_len=None):
    bsz, src_len = mask.size()
    tgt_len = tgt_len if tgt_len is not None else src_len
    expanded_mask = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted_mask = 1.0 - expanded_mask
    return inverted_mask.masked_fill(inverted_mask.to(torch.bool), torch.finfo(dtype).min)


class MBartLearnedPositionalEmbedding(nn.Embedding):
    def __init__(self, num_embeddings: int, embedding_dim: int):
        # MBart is set up so that if padding_idx is specified then offset the embedding ids by 2
        # and adjust num_embeddings appropriately. Other models don't have this hack
        self.offset = 2
        super().__init__(num_embeddings + self.offset, embedding_dim)

    def forward(self, input_ids: torch.Tensor, past_key_values_length: int = 0):
        bsz, seq_len = input_ids.shape[:2]
        positions = torch.arange(
            past_key_values_length, past_key_values_length + seq_len, dtype=torch.long, device=self.weight.device
        ).expand(bsz, -1)
        return super().forward(positions + self.offset)


class MBartAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim**-0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_states, attention_mask=None):
        bsz, tgt_len, _ = hidden_states.size()
        shape = (bsz, tgt_len, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = nn.functional.dropout(attn_weights, p=self.dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, tgt_len, -1).contiguous()
        attn_output = self.out_proj(attn_output)
        return attn_output, attn_weights


class MBartEncoderLayer(nn.Module):
    def __init__(self, config: MBartConfig):
        super().__init__()
        self.embed_dim = config.d_model
        self.self_attn = MBartAttention(self.embed_dim, config.encoder_attention_heads, config.attention_dropout)
        self.self_attn_layer_norm = nn.LayerNorm(self.embed_dim)
        self.dropout = config.dropout
        self.activation_fn = nn.GELU()
        self.activation_dropout = config.activation_dropout
        self.fc1 = nn.Linear(self.embed_dim, config.encoder_ffn_dim)
        self.fc2 = nn.Linear(config.encoder_ffn_dim, self.embed_dim)
        self.final_layer_norm = nn.LayerNorm(self.embed_dim)

    def forward(self, hidden_states, attention_mask, output_attentions: bool = False):
        residual = hidden_states
        hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states, attn_weights = self.self_attn(hidden_states=hidden_states, attention_mask=attention_mask)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.final_layer_norm(hidden_states)
        hidden_states = self.activation_fn(self.fc1(hidden_states))
        hidden_states = nn.functional.dropout(hidden_states, p=self.activation_dropout, training=self.training)
        hidden_states = self.fc2(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        hidden_states = residual + hidden_states

        if hidden_states.dtype == torch.float16 and (
            torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
        ):
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)

        outputs = (hidden_states,)
        if output_attentions:
            outputs += (attn_weights,)
        return outputs


class MBartEncoder(nn.Module):
    def __init__(self, config: MBartConfig):
        super().__init__()
        self.dropout = config.dropout
        self.layerdrop = config.encoder_layerdrop
        embed_dim = config.d_model
        self.embed_scale = math.sqrt(embed_dim) if config.scale_embedding else 1.0
        self.embed_positions = MBartLearnedPositionalEmbedding(config.max_position_embeddings, embed_dim)
        self.layers = nn.ModuleList([MBartEncoderLayer(config) for _ in range(config.encoder_layers)])
        self.layernorm_embedding = nn.LayerNorm(embed_dim)
        self.layer_norm = nn.LayerNorm(config.d_model)

    def forward(self, inputs_embeds: torch.Tensor, attention_mask: Optional[torch.Tensor] = None):
        input = inputs_embeds[:, :, -1]
        inputs_embeds = inputs_embeds * self.embed_scale
        embed_pos = self.embed_positions(input)
        hidden_states = inputs_embeds + embed_pos.to(inputs_embeds.device)
        hidden_states = self.layernorm_embedding(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)

        # expand attention_mask
        if attention_mask is not None:
            # [bsz, seq_len] -> [bsz, 1, tgt_seq_len, src_seq_len]
            attention_mask = _prepare_4d_attention_mask(attention_mask, inputs_embeds.dtype)

        for idx, encoder_layer in enumerate(self.layers):
            # add LayerDrop (see https://huggingface.co/papers/1909.11556 for description)
            to_drop = False
            if self.training:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:  # skip the layer
                    to_drop = True

            if to_drop:
                layer_outputs = (None, None)
            else:
                layer_outputs = encoder_layer(
                    hidden_states,
                    attention_mask,
                )

                hidden_states = layer_outputs[0]

        hidden_states = self.layer_norm(hidden_states)
        return hidden_states


def make():
    torch.manual_seed(0)
    return MBartEncoder(MBartConfig()).train()


def inputs():
    g = torch.Generator().manual_seed(5)
    e = lambda B, S: torch.randn(B, S, 8, generator=g)
    return [
        (e(2, 5),),
        (e(2, 4), torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])),
        (e(1, 7),),
        (e(3, 3), torch.tensor([[1, 1, 1], [1, 0, 0], [1, 1, 0]])),
        (e(1, 1),),
        (e(2, 6), torch.ones(2, 6, dtype=torch.long)),
        (e(4, 2),),
        (e(1, 9), torch.tensor([[1] * 6 + [0] * 3])),
    ]
