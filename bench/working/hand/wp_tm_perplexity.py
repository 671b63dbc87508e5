"""torchmetrics functional perplexity (_perplexity_update + _perplexity_compute).

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/text/perplexity.py

Breaks: `probs[:, target].diagonal()[mask]` -- a boolean-mask gather (data-dependent output shape).

HAND: keep the full diagonal and sum `where(mask, log(p), 0)` instead of gathering (hand rewrite).
"""
from typing import Optional, Tuple

import torch
from torch import Tensor
from torch.nn import functional as F  # noqa: N812

KIND = "bool-mask gather"
GRAD = True

_TORCH_FLOAT_OR_DOUBLE = (torch.float32, torch.float64)


def _check_shape_and_type_consistency(preds: Tensor, target: Tensor) -> None:
    if len(preds.shape) != 3:
        raise ValueError(
            "Input tensor `preds` is expected to have 3 dimensions, [batch_size, seq_len, vocab_size],"
            f" but got {len(preds.shape)}."
        )
    if len(target.shape) != 2:
        raise ValueError(
            "Input tensor `target` is expected to have 2 dimensions, [batch_size, seq_len],"
            f" but got {len(target.shape)}."
        )
    if preds.shape[:2] != target.shape:
        raise ValueError(
            "Input tensors `preds` and `target` are expected to have equaling first two dimensions,"
            f" [batch_size, seq_len], but got {preds.shape[:2]} and {target.shape}."
        )
    if preds.dtype not in _TORCH_FLOAT_OR_DOUBLE:
        raise TypeError(
            f"Input tensor `preds` is expected to be of a type one of {_TORCH_FLOAT_OR_DOUBLE} but got {preds.dtype}."
        )
    if target.dtype != torch.int64:
        raise TypeError(f"Input tensor `target` is expected to be of a type {torch.int64} but got {target.dtype}.")


def _perplexity_update(preds: Tensor, target: Tensor, ignore_index: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    _check_shape_and_type_consistency(preds, target)

    probs = F.softmax(preds.reshape(-1, preds.shape[-1]), dim=1)
    target = target.reshape(-1)

    if ignore_index is not None:
        mask = target.ne(ignore_index)
        target = target.where(target != ignore_index, torch.tensor(0, device=target.device))
    else:
        mask = torch.ones_like(target, dtype=torch.bool)

    log_probs = probs[:, target].diagonal().log()
    total_log_probs = -torch.where(mask, log_probs, 0).sum()
    count = mask.sum()

    return total_log_probs, count


def _perplexity_compute(total: Tensor, count: Tensor) -> Tensor:
    return torch.exp(total / count)


def perplexity(preds: Tensor, target: Tensor, ignore_index: Optional[int] = None) -> Tensor:
    total, count = _perplexity_update(preds, target, ignore_index)
    return _perplexity_compute(total, count)


def make():
    return perplexity


def _case(b, s, v, seed, ignore=None, n_ignored=0):
    g = torch.Generator().manual_seed(seed)
    preds = torch.randn(b, s, v, generator=g)
    target = torch.randint(v, (b, s), generator=g)
    if ignore is not None and n_ignored:
        target[0, s - n_ignored:] = ignore
    return preds, target, ignore


def inputs():
    return [
        _case(2, 8, 5, 1, -100, 2),
        _case(2, 8, 5, 2),
        _case(1, 4, 3, 3, -100, 0),
        _case(3, 5, 7, 4, 0, 0),          # ignore class 0 wherever it occurs
        _case(2, 6, 4, 5, -1, 6),         # first row fully ignored
        _case(1, 1, 2, 6),
        _case(4, 3, 6, 7, 2, 0),
        (torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(8)).double(), torch.tensor([[1, 2, 3], [0, 0, 1]]), None),
        _case(1, 3, 4, 9, -100, 3),       # everything ignored -> nan
    ]


def failing_inputs():
    return [
        (torch.randn(2, 3), torch.zeros(2, 3, dtype=torch.long), None),
        (torch.randn(2, 3, 4), torch.zeros(2, 3, dtype=torch.int32), None),
        (torch.randn(2, 3, 4), torch.zeros(3, 2, dtype=torch.long), None),
    ]
