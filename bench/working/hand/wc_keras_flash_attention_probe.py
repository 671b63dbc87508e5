"""Hand rewrite of cases/wc_keras_flash_attention_probe.py: while compiling, the default-path
flash probe returns False before building the pybind11 `SDPAParams` (the upstream Keras fix), so the
call takes the plain `scaled_dot_product_attention` branch; eager calls and the explicit
`flash_attention=True` check still probe."""
import torch
from torch import nn

KIND = "pybind-builtin"
GRAD = True


def _get_large_negative(dtype):
    if dtype == torch.float16:
        val = 65500.0
    else:
        val = 3.38953e38
    return torch.tensor(val * -0.7, dtype=dtype)


def _can_use_flash_attention(query, key, value, mask=None, is_causal=False, raise_error=False):
    """Verify the availability of flash attention."""
    if not raise_error and torch.compiler.is_compiling():
        # While tracing, leave the kernel choice to SDPA's dispatcher (the plain branch below),
        # which tries the flash kernel first: the same attention, without the pybind probe.
        return False
    try:
        from torch.backends.cuda import SDPAParams
        from torch.backends.cuda import can_use_flash_attention
    except ImportError:
        if raise_error:
            raise ImportError(
                "Flash attention is not supported in your current PyTorch "
                "version. Please update it by following the official guide: "
                "https://pytorch.org/get-started/locally/"
            )
        return False

    try:
        spda_params = SDPAParams(
            query,
            key,
            value,
            mask,
            0.0,  # dropout_p
            is_causal,
            False,  # enable_gqa
        )
    except TypeError:
        # The old function signature for the older version of PyTorch
        spda_params = SDPAParams(query, key, value, mask, 0.0, is_causal)
    if raise_error and can_use_flash_attention(spda_params, True) is False:
        raise RuntimeError(
            "Flash attention is not supported with the provided inputs. "
            "Please check the warnings for more details."
        )
    return can_use_flash_attention(spda_params, False)


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None):
    if len(query.shape) != 4 or len(key.shape) != 4 or len(value.shape) != 4:
        raise ValueError(
            "`dot_product_attention` only supports 4D inputs. "
            f"Received: query.shape={query.shape}, key.shape={key.shape}, "
            f"value.shape={value.shape}."
        )
    if bias is not None and mask is not None:
        raise ValueError("Only one of `bias` and `mask` can be provided. Received both.")
    compute_dtype = torch.promote_types(torch.promote_types(query.dtype, key.dtype), value.dtype)
    query = query.to(compute_dtype)
    key = key.to(compute_dtype)
    value = value.to(compute_dtype)

    mask = mask if mask is None else mask.to(torch.bool)
    if mask is not None:
        # Explicit set `is_causal` to `False` when `mask` is not `None`.
        is_causal = False
        mask = torch.where(mask, 0.0, _get_large_negative(query.dtype))
    if bias is not None:
        bias = bias.to(compute_dtype)
        is_causal = False
        mask = bias

    axis0, axis1 = 1, 2
    query = torch.transpose(query, axis0, axis1)
    key = torch.transpose(key, axis0, axis1)
    value = torch.transpose(value, axis0, axis1)

    if mask is not None:
        flash_attention = False
    elif flash_attention is None:
        flash_attention = _can_use_flash_attention(query, key, value, mask, is_causal)
    elif flash_attention is True:
        # Use `raise_error=True` to provide more details if the inputs failed to
        # use flash attention
        _can_use_flash_attention(query, key, value, mask, is_causal, raise_error=True)
    if flash_attention:
        with torch.nn.attention.sdpa_kernel(backends=[torch.nn.attention.SDPBackend.FLASH_ATTENTION]):
            attention_output = torch.nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=None, is_causal=is_causal, scale=scale
            )
    else:
        attn_mask_arg = None if is_causal else mask
        if mask is not None:
            with torch.nn.attention.sdpa_kernel(backends=[torch.nn.attention.SDPBackend.MATH]):
                attention_output = torch.nn.functional.scaled_dot_product_attention(
                    query, key, value, attn_mask=attn_mask_arg, is_causal=is_causal, scale=scale
                )
        else:
            attention_output = torch.nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=attn_mask_arg, is_causal=is_causal, scale=scale
            )
    return torch.transpose(attention_output, axis1, axis0)


class MultiHeadAttention(nn.Module):
    def __init__(self, num_heads=2, key_dim=4, model_dim=8):
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.query_dense = nn.Linear(model_dim, num_heads * key_dim)
        self.key_dense = nn.Linear(model_dim, num_heads * key_dim)
        self.value_dense = nn.Linear(model_dim, num_heads * key_dim)
        self.output_dense = nn.Linear(num_heads * key_dim, model_dim)

    def forward(self, query, value, attention_mask=None, use_causal_mask=False, flash_attention=None):
        b, tq, _ = query.shape
        tv = value.shape[1]
        q = self.query_dense(query).view(b, tq, self.num_heads, self.key_dim)
        k = self.key_dense(value).view(b, tv, self.num_heads, self.key_dim)
        v = self.value_dense(value).view(b, tv, self.num_heads, self.key_dim)
        if attention_mask is not None:
            attention_mask = attention_mask[:, None, :, :]  # (B, 1, Tq, Tv), broadcast over heads
        out = dot_product_attention(
            q, k, v, mask=attention_mask, scale=1.0 / self.key_dim**0.5,
            is_causal=use_causal_mask, flash_attention=flash_attention,
        )
        return self.output_dense(out.reshape(b, tq, self.num_heads * self.key_dim))


def make():
    torch.manual_seed(0)
    return MultiHeadAttention()


def inputs():
    torch.manual_seed(0)
    x = lambda b, t: torch.randn(b, t, 8)
    pad_mask = torch.ones(2, 5, 5, dtype=torch.bool)
    pad_mask[1, :, 3:] = False
    return [
        (x(2, 5), x(2, 5)),                               # self-attention, probe -> plain SDPA
        (x(1, 3), x(1, 6)),                               # cross-attention, probe
        (x(2, 4), x(2, 4), None, True),                   # causal, probe
        (x(2, 5), x(2, 5), pad_mask),                     # padding mask: no probe, MATH kernel
        (x(1, 4), x(1, 4), torch.tril(torch.ones(1, 4, 4, dtype=torch.bool))),  # explicit causal mask
        (x(2, 5), x(2, 5), None, False, False),           # flash explicitly off: no probe
        (x(1, 1), x(1, 7)),                               # one query token, probe
        (x(3, 2), x(3, 2), None, True),                   # causal, probe
        (x(2, 5), x(2, 5), pad_mask, True),               # mask wins over causal
    ]


def failing_inputs():
    torch.manual_seed(1)
    x = lambda b, t: torch.randn(b, t, 8)
    # flash explicitly requested: the probe (debug) explains why not and the layer raises
    return [(x(2, 5), x(2, 5), None, False, True), (x(1, 3), x(1, 3), None, True, True)]
