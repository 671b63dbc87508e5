"""torchmetrics' functional retrieval average precision (`retrieval_average_precision`, the
per-query kernel of `RetrievalMAP` and of retrieval evaluation loops): the inputs are checked
(target must be binary: `if ... (target.max() > 1 or target.min() < 0): raise ValueError`), the
targets are sorted by the predicted scores, a query with no relevant document scores 0
(`if not target.sum(): return tensor(0.0)`), and the precision at each relevant position is
averaged, the relevant positions being taken with a boolean mask.

Source: https://github.com/Lightning-AI/torchmetrics/blob/ed67ed046d6043077779dc8455e8117bf3d14085/src/torchmetrics/functional/retrieval/average_precision.py
(`retrieval_average_precision`) and
https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/utilities/checks.py
(`_check_retrieval_functional_inputs`, `_check_retrieval_target_and_prediction_types`). Tiny
shapes: 4-8 documents per query; bool, int64, int32 and float targets; top_k None or 1-5.

Breaks: `if not allow_non_binary_target and (target.max() > 1 or target.min() < 0):`
(data-dependent branch of the input check), `if not target.sum():` (data-dependent branch) and
`torch.arange(...)[target > 0]` (boolean-mask selection: data-dependent size).

HAND: the binary check runs in a `torch.library.custom_op` with an ordered effect that raises the
same ValueError; the average precision is computed over all positions:
`hits = cumsum(relevant)`, `sum(where(relevant, hits / position, 0)) / count`, and
`torch.where(count > 0, ..., 0.0)` gives the 0 of a query without relevant documents (same float32
value; precision at the k-th relevant position is k / position in both).
"""
from typing import Optional, Tuple

import torch
from torch import Tensor, tensor

KIND = "check+branch+mask"


def _check_retrieval_target_and_prediction_types(
    preds: Tensor,
    target: Tensor,
    allow_non_binary_target: bool = False,
) -> Tuple[Tensor, Tensor]:
    """Check ``preds`` and ``target`` tensors are of the same shape and of the correct data type.

    Args:
        preds: either tensor with scores/logits
        target: tensor with ground true labels
        allow_non_binary_target: whether to allow target to contain non-binary values

    Raises:
        ValueError:
            If ``preds`` and ``target`` don't have the same shape, if they are empty or not of the correct ``dtypes``.

    """
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
    """Check ``preds`` and ``target`` tensors are of the same shape and of the correct data type.

    Returns:
        preds: as torch.float32
        target: as torch.long if not floating point else torch.float32

    """
    if preds.shape != target.shape:
        raise ValueError("`preds` and `target` must be of the same shape")

    if not preds.numel() or not preds.size():
        raise ValueError("`preds` and `target` must be non-empty and non-scalar tensors")

    return _check_retrieval_target_and_prediction_types(
        preds, target, allow_non_binary_target=allow_non_binary_target
    )


def retrieval_average_precision(preds: Tensor, target: Tensor, top_k: Optional[int] = None) -> Tensor:
    """Compute average precision (for information retrieval), as explained in `IR Average precision`_.

    ``preds`` and ``target`` should be of the same shape and live on the same device. If no ``target`` is ``True``,
    ``0`` is returned. ``target`` must be either `bool` or `integers` and ``preds`` must be ``float``,
    otherwise an error is raised.

    Args:
        preds: estimated probabilities of each document to be relevant.
        target: ground truth about each document being relevant or not.
        top_k: consider only the top k elements (default: ``None``, which considers them all)

    Return:
        a single-value tensor with the average precision (AP) of the predictions ``preds`` w.r.t. the labels ``target``.

    Raises:
        ValueError:
            If ``top_k`` is not ``None`` or an integer larger than 0.

    """
    preds, target = _check_retrieval_functional_inputs(preds, target)

    top_k = top_k or preds.shape[-1]
    if not isinstance(top_k, int) and top_k <= 0:
        raise ValueError(f"Argument ``top_k`` has to be a positive integer or None, but got {top_k}.")

    target = target[preds.topk(min(top_k, preds.shape[-1]), sorted=True, dim=-1)[1]]
    if not target.sum():
        return tensor(0.0, device=preds.device)

    positions = torch.arange(1, len(target) + 1, device=target.device, dtype=torch.float32)[target > 0]
    return torch.div((torch.arange(len(positions), device=positions.device, dtype=torch.float32) + 1), positions).mean()


def make():
    torch.manual_seed(0)
    return retrieval_average_precision


def inputs():
    g = torch.Generator().manual_seed(8)
    p = lambda n: torch.rand(n, generator=g)
    return [
        (p(6), torch.tensor([True, False, True, False, False, True]), None),
        (p(5), torch.tensor([0, 0, 1, 0, 1]), None),
        (p(8), torch.tensor([0, 1, 1, 0, 0, 0, 1, 1], dtype=torch.int32), 3),
        (p(4), torch.tensor([0.0, 0.0, 0.0, 0.0]), None),
        (p(6), torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]), 2),
        (p(7), torch.tensor([0, 0, 0, 0, 0, 0, 1]), 1),
        (torch.tensor([0.9, 0.8, 0.7, 0.1, 0.2]), torch.tensor([0, 0, 0, 1, 1]), 3),
        (p(8).view(2, 4), torch.tensor([[1, 0, 0, 1], [0, 1, 0, 0]]), 5),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(9)
    return [
        (torch.rand(5, generator=g), torch.tensor([0, 2, 1, 0, 0]), None),
        (torch.rand(4, generator=g), torch.tensor([0.0, -1.0, 1.0, 0.0]), 2),
    ]
