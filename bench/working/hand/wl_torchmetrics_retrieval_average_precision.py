"""Hand rewrite of cases/wl_torchmetrics_retrieval_average_precision.py: the binary-target check in a
custom op with an ordered effect; the average precision as a masked sum over all positions."""
from typing import Optional, Tuple

import torch
from torch import Tensor, tensor
from torch._library.effects import EffectType

KIND = "check+branch+mask"


_NS = "wl_tm_retrieval_ap"
if not hasattr(getattr(torch.ops, _NS), "check_binary_target"):

    @torch.library.custom_op(f"{_NS}::check_binary_target", mutates_args=())
    def _check_binary_target(target: Tensor) -> None:
        if target.max() > 1 or target.min() < 0:
            raise ValueError("`target` must contain `binary` values")

    @_check_binary_target.register_fake
    def _(target):
        return None

    _check_binary_target.register_effect(EffectType.ORDERED)


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

    if not allow_non_binary_target:
        torch.ops.wl_tm_retrieval_ap.check_binary_target(target)

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
    relevant = target > 0
    positions = torch.arange(1, len(target) + 1, device=target.device, dtype=torch.float32)
    hits = relevant.cumsum(0).to(torch.float32)
    count = relevant.sum()
    precision_sum = torch.where(relevant, torch.div(hits, positions), 0.0).sum()
    average = precision_sum / count.clamp(min=1)
    return torch.where(count > 0, average, tensor(0.0, device=preds.device))


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
