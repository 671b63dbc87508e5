"""Hugging Face `GraniteModel.forward` (same code as `LlamaModel.forward`) trained with gradient
checkpointing: when the config's `use_cache=True` reaches the forward in training mode with
gradient checkpointing on, the model logs "`use_cache=True` is incompatible with gradient
checkpointing. Setting `use_cache=False`." through `logger.warning_once` and turns the cache off;
the decoder layers then run under `torch.utils.checkpoint` (non-reentrant).

Source: https://github.com/foundation-model-stack/fms-hf-tuning/pull/516 ("`modeling_granite`/`llama`
has a check to set it to false anyway but after printing the following warning: `use_cache=True` is
incompatible with gradient checkpointing. Setting `use_cache=False`. This is causing a graph break
when doing torch.compile"), code from transformers v4.50
https://github.com/huggingface/transformers/blob/v4.50.0/src/transformers/models/granite/modeling_granite.py
(`GraniteModel.forward`, `GraniteDecoderLayer`, `GraniteMLP`, `GraniteRMSNorm`) and
src/transformers/utils/logging.py (`warning_once`, an `lru_cache`d `Logger.warning`, patched onto
`logging.Logger`). Reduced: 2 layers, hidden 8, 2 heads, no rotary embedding or attention mask
(causal SDPA with Granite's `attention_multiplier` as the scale), no `DynamicCache`; the module is
built in training mode with `gradient_checkpointing_enable(use_reentrant=False)`.

Breaks: `logger.warning_once(...)` -- a `logging.Logger` method ("Logger not supported for
non-export cases"), on every call where `use_cache` is truthy (the record itself is emitted once).

HAND: the `logger.warning_once` call moves into a `torch.library.custom_op` with an ORDERED effect,
anchored to `input_ids`, that calls the same `logger.warning_once` at run time: the same record
(logger, WARNING, text) is emitted on the first such call only, and the forward is one graph.
"""
import functools
import logging
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

KIND = "logging"
GRAD = True


@functools.lru_cache(None)
def warning_once(self, *args, **kwargs):
    """
    This method is identical to `logger.warning()`, but will emit the warning with the same message only once

    Note: The cache is for the function arguments, so 2 different callers using the same arguments will hit the cache.
    The assumption here is that all warning messages are unique across the code. If they aren't then need to switch to
    another type of cache that includes the caller frame information in the hashing function.
    """
    self.warning(*args, **kwargs)


logging.Logger.warning_once = warning_once

logger = logging.getLogger(__name__)


class GraniteConfig:
    vocab_size = 16
    hidden_size = 8
    intermediate_size = 16
    num_hidden_layers = 2
    num_attention_heads = 2
    rms_norm_eps = 1e-6
    attention_dropout = 0.0
    use_cache = True
    output_attentions = False
    output_hidden_states = False
    embedding_multiplier = 12.0
    residual_multiplier = 0.22
    attention_multiplier = 0.0625
    pad_token_id = 0


class GraniteRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class GraniteMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
        return down_proj


class GraniteAttention(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.scaling = config.attention_multiplier
        self.attention_dropout = config.attention_dropout
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        attn_output = F.scaled_dot_product_attention(
            query_states,
            key_states,
            value_states,
            dropout_p=0.0 if not self.training else self.attention_dropout,
            is_causal=True,
            scale=self.scaling,
        )
        attn_output = attn_output.transpose(1, 2).reshape(*input_shape, -1).contiguous()
        attn_output = self.o_proj(attn_output)
        return attn_output, None


class GraniteDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.self_attn = GraniteAttention(config=config, layer_idx=layer_idx)
        self.mlp = GraniteMLP(config)
        self.input_layernorm = GraniteRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = GraniteRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.residual_multiplier = config.residual_multiplier

    def forward(self, hidden_states, output_attentions=False, use_cache=False):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        # Self Attention
        hidden_states, self_attn_weights = self.self_attn(hidden_states=hidden_states)
        hidden_states = residual + hidden_states * self.residual_multiplier
        # Fully Connected
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states * self.residual_multiplier  # main diff with Llama
        outputs = (hidden_states,)
        if output_attentions:
            outputs += (self_attn_weights,)
        return outputs


class GraniteModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.padding_idx = config.pad_token_id
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, self.padding_idx)
        self.layers = nn.ModuleList(
            [GraniteDecoderLayer(config, layer_idx) for layer_idx in range(config.num_hidden_layers)]
        )
        self.norm = GraniteRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.gradient_checkpointing = False
        self.embedding_multiplier = config.embedding_multiplier

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        if gradient_checkpointing_kwargs is None:
            gradient_checkpointing_kwargs = {"use_reentrant": True}
        self._gradient_checkpointing_func = partial(checkpoint, **gradient_checkpointing_kwargs)
        self.gradient_checkpointing = True

    def forward(self, input_ids=None, use_cache=None, inputs_embeds=None, output_attentions=None,
                output_hidden_states=None):
        output_attentions = output_attentions if output_attentions is not None else self.config.output_attentions
        output_hidden_states = (
            output_hidden_states if output_hidden_states is not None else self.config.output_hidden_states
        )
        use_cache = use_cache if use_cache is not None else self.config.use_cache

        if (input_ids is None) ^ (inputs_embeds is not None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")

        if self.gradient_checkpointing and self.training and use_cache:
            logger.warning_once(
                "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`."
            )
            use_cache = False

        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)

        inputs_embeds = inputs_embeds * self.embedding_multiplier  # main diff with Llama

        hidden_states = inputs_embeds

        # decoder layers
        all_hidden_states = () if output_hidden_states else None
        all_self_attns = () if output_attentions else None

        for decoder_layer in self.layers[: self.config.num_hidden_layers]:
            if output_hidden_states:
                all_hidden_states += (hidden_states,)

            if self.gradient_checkpointing and self.training:
                layer_outputs = self._gradient_checkpointing_func(
                    decoder_layer.__call__,
                    hidden_states,
                    output_attentions,
                    use_cache,
                )
            else:
                layer_outputs = decoder_layer(hidden_states, output_attentions=output_attentions, use_cache=use_cache)

            hidden_states = layer_outputs[0]

            if output_attentions:
                all_self_attns += (layer_outputs[1],)

        hidden_states = self.norm(hidden_states)

        # add hidden states from the last decoder layer
        if output_hidden_states:
            all_hidden_states += (hidden_states,)

        return hidden_states, all_hidden_states


def make():
    torch.manual_seed(0)
    model = GraniteModel(GraniteConfig())
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model.train()


def inputs():
    g = torch.Generator().manual_seed(11)

    def ids(b, t):
        return torch.randint(1, 16, (b, t), generator=g)

    return [
        (ids(2, 5), None),          # config default use_cache=True -> warning (first time only)
        (ids(2, 5), True),          # again: warning_once already emitted, no record
        (ids(1, 7), False),         # cache off: no warning
        (ids(3, 4), None),
        (ids(1, 3), False),
        (ids(2, 6), True),
        (ids(1, 1), None),          # single token
        (ids(2, 8), False),
        (ids(1, 5), True),
    ]
