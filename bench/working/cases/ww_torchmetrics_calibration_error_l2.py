"""torchmetrics calibration error (ECE / RMSCE / MCE): `_ce_compute`, the compute step behind
BinaryCalibrationError / MulticlassCalibrationError and their functional forms.

Source: https://github.com/Lightning-AI/torchmetrics/blob/dab033394560ab3ce05e3d14c13f32e4cde6b351/src/torchmetrics/functional/classification/calibration_error.py
(_binning_bucketize and _ce_compute, kept as in the source).

Breaks: the l2 norm returns `torch.sqrt(ce) if ce > 0 else torch.tensor(0)` -- a conditional
expression on a 0-d tensor (dynamo: "Data-dependent branching"). It is reached on every l2 call.

HAND: none — the two outcomes differ in dtype and device: sqrt(ce) is a floating tensor, the other
branch is `torch.tensor(0)`, an int64 CPU tensor, returned when the binned accuracies equal the
binned confidences exactly (a perfectly calibrated batch) or when the debiased estimate is <= 0.
torch.where / torch.cond need one dtype for both outcomes, so no graph-safe rewrite returns the
same value.
"""

from typing import Union

import torch
from torch import Tensor


def _binning_bucketize(confidences: Tensor, accuracies: Tensor, bin_boundaries: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Compute calibration bins using ``torch.bucketize``. Use for ``pytorch >=1.6``."""
    accuracies = accuracies.to(dtype=confidences.dtype)
    acc_bin = torch.zeros(len(bin_boundaries), device=confidences.device, dtype=confidences.dtype)
    conf_bin = torch.zeros(len(bin_boundaries), device=confidences.device, dtype=confidences.dtype)
    count_bin = torch.zeros(len(bin_boundaries), device=confidences.device, dtype=confidences.dtype)

    indices = torch.bucketize(confidences, bin_boundaries, right=True) - 1

    count_bin.scatter_add_(dim=0, index=indices, src=torch.ones_like(confidences))

    conf_bin.scatter_add_(dim=0, index=indices, src=confidences)
    conf_bin = torch.nan_to_num(conf_bin / count_bin)

    acc_bin.scatter_add_(dim=0, index=indices, src=accuracies)
    acc_bin = torch.nan_to_num(acc_bin / count_bin)

    prop_bin = count_bin / count_bin.sum()
    return acc_bin, conf_bin, prop_bin


def _ce_compute(
    confidences: Tensor,
    accuracies: Tensor,
    bin_boundaries: Union[Tensor, int],
    norm: str = "l1",
    debias: bool = False,
) -> Tensor:
    """Compute the calibration error given the provided bin boundaries and norm."""
    if isinstance(bin_boundaries, int):
        bin_boundaries = torch.linspace(0, 1, bin_boundaries + 1, dtype=confidences.dtype, device=confidences.device)

    if norm not in {"l1", "l2", "max"}:
        raise ValueError(f"Argument `norm` is expected to be one of 'l1', 'l2', 'max' but got {norm}")

    with torch.no_grad():
        acc_bin, conf_bin, prop_bin = _binning_bucketize(confidences, accuracies, bin_boundaries)

    if norm == "l1":
        return torch.sum(torch.abs(acc_bin - conf_bin) * prop_bin)
    if norm == "max":
        ce = torch.max(torch.abs(acc_bin - conf_bin))
    if norm == "l2":
        ce = torch.sum(torch.pow(acc_bin - conf_bin, 2) * prop_bin)
        # NOTE: debiasing is disabled in the wrapper functions. This implementation differs from that in sklearn.
        if debias:
            # the order here (acc_bin - 1 ) vs (1 - acc_bin) is flipped from
            # the equation in Verified Uncertainty Prediction (Kumar et al 2019)/
            debias_bins = (acc_bin * (acc_bin - 1) * prop_bin) / (prop_bin * accuracies.size()[0] - 1)
            ce += torch.sum(torch.nan_to_num(debias_bins))  # replace nans with zeros if nothing appeared in a bin
        return torch.sqrt(ce) if ce > 0 else torch.tensor(0)
    return ce


KIND = "data-dependent conditional expression (dtype differs)"


def make():
    torch.manual_seed(0)
    return _ce_compute


def _batch(g, n, skew=0.0):
    # multiclass-style: confidence of the top-1 prediction and whether it was right
    conf = 0.2 + 0.8 * torch.rand(n, generator=g)
    acc = (torch.rand(n, generator=g) < (conf - skew).clamp(0, 1)).float()
    return conf, acc


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    out.append((*_batch(g, 64), 15, "l2"))
    out.append((*_batch(g, 40, 0.2), 10, "l2"))
    out.append((*_batch(g, 32), 15, "l1"))
    out.append((*_batch(g, 32), torch.linspace(0, 1, 6), "max"))
    out.append((*_batch(g, 48), 15, "l2", True))  # debiased: the estimate comes out <= 0 here
    out.append((torch.ones(16), torch.ones(16), 15, "l2"))  # perfectly calibrated: ce == 0
    out.append((torch.full((8,), 0.5), torch.tensor([1.0, 0.0] * 4), 4, "l2"))  # 0.5 conf, half right: ce == 0
    out.append((*_batch(g, 6), 15, "l2", True))  # tiny batch, debiased
    out.append((*_batch(g, 50, 0.3), torch.linspace(0, 1, 11, dtype=torch.float32), "l2"))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [(*_batch(g, 8), 15, "l3")]
