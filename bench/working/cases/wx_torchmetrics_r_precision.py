"""torchmetrics functional R-Precision for information retrieval (retrieval_r_precision), with the input
checks it runs first (_check_retrieval_functional_inputs -> _check_retrieval_target_and_prediction_types).

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/retrieval/r_precision.py
        https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/utilities/checks.py
Breaks: `if not allow_non_binary_target and (target.max() > 1 or target.min() < 0): raise` (data-dependent
        check); `if not relevant_number: return tensor(0.0, ...)` (data-dependent early return); and
        `[:relevant_number]` slicing with a 0-d tensor (tensor -> int slice bound).
        The metric is called per query in a small loop over a batch of queries (as RetrievalRPrecision does
        per group), averaged at the end.
HAND: yes — the binary check becomes a custom op with an ORDERED effect that raises the same ValueError;
      the early return becomes torch.where; the top-`relevant_number` slice becomes a rank mask
      (arange < relevant_number) and a masked sum. Same values/dtypes.
"""
import torch
from torch import Tensor, tensor
from typing import Tuple

KIND = "data-dependent check/return/slice (metric)"


def _check_retrieval_target_and_prediction_types(
    preds: Tensor,
    target: Tensor,
    allow_non_binary_target: bool = False,
) -> Tuple[Tensor, Tensor]:
    if target.dtype not in (torch.bool, torch.long, torch.int) and not torch.is_floating_point(target):
        raise ValueError("`target` must be a tensor of booleans, integers or floats")

    if not preds.is_floating_point():
        raise ValueError("`preds` must be a tensor of floats")

    if not allow_non_binary_target and (target.max() > 1 or target.min() < 0):
        raise ValueError("`target` must contain `binary` values")

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
    if not relevant_number:
        return tensor(0.0, device=preds.device)

    relevant = target[torch.argsort(preds, dim=-1, descending=True)][:relevant_number].sum().float()
    return relevant / relevant_number


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
