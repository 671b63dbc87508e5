"""Hand rewrite of cases/wk_torchtune_flex_log_once.py: the `log_once` call runs at run time inside
a `torch.library.custom_op` with an ORDERED effect (anchored to `q`), which calls the same
`lru_cache`d helper, so the same single DEBUG record is emitted."""
import logging
from functools import lru_cache
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn as nn
from torch._library.effects import EffectType
from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention

KIND = "logging-lru-cache"


def get_logger(level: Optional[str] = None) -> logging.Logger:
    logger = logging.getLogger(__name__)
    if level is not None:
        level = getattr(logging, level.upper())
        logger.setLevel(level)
    return logger


def log_rank_zero(logger: logging.Logger, msg: str, level: int = logging.INFO) -> None:
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    if rank != 0:
        return
    logger.log(level, msg, stacklevel=2)


@lru_cache(None)
def log_once(logger: logging.Logger, msg: str, level: int = logging.INFO) -> None:
    log_rank_zero(logger=logger, msg=msg, level=level)


_log = get_logger("DEBUG")

_NS = "wk_torchtune_flex"
if not hasattr(getattr(torch.ops, _NS), "log_flex_once"):

    @torch.library.custom_op(f"{_NS}::log_flex_once", mutates_args=())
    def _log_flex_once(anchor: torch.Tensor) -> None:
        # the module is re-imported per run; call the current module's helper and logger
        import sys

        mod = sys.modules[__name__]
        mod.log_once(
            mod._log,
            "Using flex attention for attention computation since a BlockMask was passed in.",
            level=logging.DEBUG,
        )

    @_log_flex_once.register_fake
    def _(anchor):
        return None

    _log_flex_once.register_effect(EffectType.ORDERED)


def _attention_call(q, k, v, mask, dropout_p, is_causal):
    if isinstance(mask, BlockMask):
        getattr(torch.ops, _NS).log_flex_once(q)
        if dropout_p > 0.0:
            raise ValueError("Flex attention does not support dropout. Please set dropout to 0.0.")
        return flex_attention(q, k, v, block_mask=mask)
    else:
        # shape: [b, 1, s, s]
        if mask is not None:
            mask = mask[:, None, :, :]
        return nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal
        )


def _packed_block_causal(doc_ids):
    def mask_mod(b, h, q_idx, kv_idx):
        return (doc_ids[b, q_idx] == doc_ids[b, kv_idx]) & (q_idx >= kv_idx)

    B, S = doc_ids.shape
    return create_block_mask(mask_mod, B, None, S, S, device="cpu")


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim=8, num_heads=2, seq_len=8):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.output_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.attn_dropout = 0.0
        self.packed_masks = {
            "two_docs": _packed_block_causal(torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1]])),
            "three_docs_b2": _packed_block_causal(
                torch.tensor([[0, 0, 1, 1, 1, 2, 2, 2], [0, 0, 0, 0, 0, 0, 1, 1]])
            ),
        }

    def forward(self, x, mask=None):
        if isinstance(mask, str):
            mask = self.packed_masks[mask]
        b, s_x, _ = x.shape
        q = self.q_proj(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        output = _attention_call(
            q,
            k,
            v,
            mask=mask,
            dropout_p=self.attn_dropout if self.training else 0.0,
            is_causal=mask is None,
        )
        output = output.transpose(1, 2).contiguous().view(b, s_x, -1)
        return self.output_proj(output)


def make():
    torch.manual_seed(0)
    # inference: FlexAttention has no backward on CPU, and refuses inputs that require grad
    return MultiHeadAttention().eval().requires_grad_(False)


def inputs():
    g = torch.Generator().manual_seed(6)
    x = lambda b: torch.randn(b, 8, 8, generator=g)
    causal = torch.ones(8, 8, dtype=torch.bool).tril()
    return [
        (x(1), "two_docs"),
        (x(1),),
        (x(2), "three_docs_b2"),
        (x(2), causal.expand(2, 8, 8).clone()),
        (x(1), "two_docs"),
        (x(2), None),
        (x(1), torch.ones(1, 8, 8, dtype=torch.bool)),
        (x(2), "three_docs_b2"),
    ]
