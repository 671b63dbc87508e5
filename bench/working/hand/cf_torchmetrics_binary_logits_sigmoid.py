"""Hand rewrite of cases/cf_torchmetrics_binary_logits_sigmoid.py: the logits test becomes a `torch.where`."""
from typing import Optional, Tuple

import torch
from torch import Tensor

KIND = "branch"


def _binary_stat_scores_format(
    preds: Tensor, target: Tensor, threshold: float = 0.5, ignore_index: Optional[int] = None
) -> Tuple[Tensor, Tensor]:
    """Convert all input to label format.

    - If preds tensor is floating point, applies sigmoid if pred tensor not in [0,1] range
    - If preds tensor is floating point, thresholds afterwards
    - Mask all datapoints that should be ignored with negative values
    """
    if preds.is_floating_point():
        # preds is logits when not all in [0, 1]: convert with sigmoid
        preds = torch.where(torch.all((preds >= 0) * (preds <= 1)), preds, preds.sigmoid())
        preds = preds > threshold

    preds = preds.reshape(preds.shape[0], -1)
    target = target.reshape(target.shape[0], -1)

    if ignore_index is not None:
        idx = target == ignore_index
        target = target.clone()
        target[idx] = -1

    return preds, target


def _binary_stat_scores_update(preds: Tensor, target: Tensor, multidim_average: str = "global") -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Compute the statistics."""
    sum_dim = [0, 1] if multidim_average == "global" else [1]
    tp = ((target == preds) & (target == 1)).sum(sum_dim).squeeze()
    fn = ((target != preds) & (target == 1)).sum(sum_dim).squeeze()
    fp = ((target != preds) & (target == 0)).sum(sum_dim).squeeze()
    tn = ((target == preds) & (target == 0)).sum(sum_dim).squeeze()
    return tp, fp, tn, fn


def _binary_stat_scores_compute(tp: Tensor, fp: Tensor, tn: Tensor, fn: Tensor, multidim_average: str = "global") -> Tensor:
    """Stack statistics and compute support also."""
    return torch.stack([tp, fp, tn, fn, tp + fn], dim=0 if multidim_average == "global" else 1).squeeze()


def binary_stat_scores(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    if validate_args:
        raise NotImplementedError("validation is not part of this case")
    preds, target = _binary_stat_scores_format(preds, target, threshold, ignore_index)
    tp, fp, tn, fn = _binary_stat_scores_update(preds, target, multidim_average)
    return _binary_stat_scores_compute(tp, fp, tn, fn, multidim_average)


def make():
    return binary_stat_scores


def inputs():
    torch.manual_seed(0)
    t = lambda *s: torch.randint(0, 2, s)
    return [
        (torch.rand(8), t(8), 0.5, "global", None, False),              # probabilities
        (torch.randn(8) * 3, t(8), 0.5, "global", None, False),         # logits
        (torch.randn(4, 5), t(4, 5), 0.3, "samplewise", None, False),
        (torch.rand(4, 5), t(4, 5), 0.7, "samplewise", None, False),
        (torch.rand(6), torch.tensor([0, 1, -1, 1, -1, 0]), 0.5, "global", -1, False),
        (torch.randn(6), torch.tensor([0, 1, 2, 1, 2, 0]), 0.5, "global", 2, False),
        (t(8), t(8), 0.5, "global", None, False),                       # integer predictions
        (torch.tensor([0.0, 1.0, 1.0001, 0.5]), t(4), 0.5, "global", None, False),
    ]
