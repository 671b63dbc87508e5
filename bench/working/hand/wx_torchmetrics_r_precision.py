"""Hand rewrite of wx_torchmetrics_r_precision (see the case file for the source).

HAND: the binary-target check is a torch.library.custom_op with an ORDERED effect that raises the same
ValueError at run time; `if not relevant_number: return tensor(0.0)` becomes torch.where; the
`[:relevant_number]` slice of the sorted targets becomes a rank mask and a masked sum.
"""
import torch
from torch import Tensor, tensor
from typing import Tuple

from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = "data-dependent check/return/slice (metric)"


@torch.library.custom_op("wx_tm_rprec::check_binary", mutates_args=(), tags=(torch.Tag.nondeterministic_seeded,))
def _check_binary(target: Tensor) -> None:
    if target.max() > 1 or target.min() < 0:
        raise ValueError("`target` must contain `binary` values")


@_check_binary.register_fake
def _(target):
    return None


_register_effectful_op(torch.ops.wx_tm_rprec.check_binary.default, _EffectType.ORDERED)


def _check_retrieval_target_and_prediction_types(
    preds: Tensor,
    target: Tensor,
    allow_non_binary_target: bool = False,
) -> Tuple[Tensor, Tensor]:
    if target.dtype not in (torch.bool, torch.long, torch.int) and not torch.is_floating_point(target):
        raise ValueError("`target` must be a tensor of booleans, integers or floats")

    if not preds.is_floating_point():
        raise ValueError("`preds` must be a tensor of floats")

    if not allow_non_binary_target:
        _check_binary(target)

    target = target.float() if target.is_floating_point() else target.long()
    preds = preds.float()

    return preds.flatten(), target.flatten()


def _check_retrieval_functional_inputs(
    preds: Tensor,
    target: Tensor,
    allow_non_binary_target: bool = False,
) -> Tuple[Tensor, Tensor]:
    if preds.shape != target.shape:
        raise ValueError("`preds` and `target` must be of the same shape")

    if not preds.numel() or not preds.size():
        raise ValueError("`preds` and `target` must be non-empty and non-scalar tensors")

    return _check_retrieval_target_and_prediction_types(preds, target, allow_non_binary_target=allow_non_binary_target)


def retrieval_r_precision(preds: Tensor, target: Tensor) -> Tensor:
    preds, target = _check_retrieval_functional_inputs(preds, target)

    relevant_number = target.sum()
    ranked = target[torch.argsort(preds, dim=-1, descending=True)]
    in_top = torch.arange(ranked.size(0), device=ranked.device) < relevant_number
    relevant = torch.where(in_top, ranked, torch.zeros_like(ranked)).sum().float()
    safe_number = torch.where(relevant_number == 0, torch.ones_like(relevant_number), relevant_number)
    return torch.where(relevant_number == 0, tensor(0.0, device=preds.device), relevant / safe_number)


def batched_r_precision(preds: Tensor, target: Tensor) -> Tensor:
    """Mean R-Precision over a batch of queries (rows)."""
    res = [retrieval_r_precision(preds[i], target[i]) for i in range(preds.size(0))]
    return torch.stack(res).mean()


def make():
    torch.manual_seed(0)
    return batched_r_precision


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for q, n, dt in [(2, 5, torch.long), (3, 6, torch.bool), (1, 4, torch.long), (4, 3, torch.int),
                     (2, 8, torch.bool), (3, 5, torch.long), (1, 7, torch.long), (2, 4, torch.bool)]:
        preds = torch.rand(q, n, generator=g)
        target = (torch.rand(q, n, generator=g) < 0.4).to(dt)
        out.append((preds, target))
    # a query without any relevant document (early-return branch) next to a normal one
    preds = torch.rand(2, 5, generator=g)
    target = torch.tensor([[0, 0, 0, 0, 0], [1, 0, 1, 0, 0]])
    out.append((preds, target))
    out.append((torch.rand(1, 3, generator=g), torch.zeros(1, 3, dtype=torch.bool)))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [
        (torch.rand(2, 4, generator=g), torch.tensor([[0, 2, 1, 0], [1, 0, 0, 1]])),   # non-binary
        (torch.rand(1, 4, generator=g), torch.tensor([[0, -1, 1, 0]])),                # negative
    ]
