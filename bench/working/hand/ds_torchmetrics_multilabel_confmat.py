"""Hand rewrite of ds_torchmetrics_multilabel_confmat: where / masked_fill / scatter_add_ histogram.
The NaN count and its warning in `_confusion_matrix_reduce` stay as they are."""

import warnings
from typing import Optional

import torch
from torch import Tensor

KIND = "bincount+mask"


def rank_zero_warn(message):
    """torchmetrics.utilities.prints.rank_zero_warn on a single process."""
    warnings.warn(message)


def _bincount(x: Tensor, minlength: Optional[int] = None) -> Tensor:
    """torchmetrics' bincount: a mesh comparison when deterministic algorithms are on, else torch.bincount."""
    if minlength is None:
        minlength = len(torch.unique(x))
    if torch.are_deterministic_algorithms_enabled() or x.is_mps:
        mesh = torch.arange(minlength, device=x.device).repeat(len(x), 1)
        return torch.eq(x.reshape(-1, 1), mesh).sum(dim=0)
    return torch.bincount(x, minlength=minlength)


def _confusion_matrix_reduce(confmat: Tensor, normalize: Optional[str] = None) -> Tensor:
    allowed_normalize = ("true", "pred", "all", "none", None)
    if normalize not in allowed_normalize:
        raise ValueError(f"Argument `normalize` needs to one of the following: {allowed_normalize}")
    if normalize is not None and normalize != "none":
        confmat = confmat.float() if not confmat.is_floating_point() else confmat
        if normalize == "true":
            confmat = confmat / confmat.sum(dim=-1, keepdim=True)
        elif normalize == "pred":
            confmat = confmat / confmat.sum(dim=-2, keepdim=True)
        elif normalize == "all":
            confmat = confmat / confmat.sum(dim=[-2, -1], keepdim=True)

        nan_elements = confmat[torch.isnan(confmat)].nelement()
        if nan_elements != 0:
            confmat[torch.isnan(confmat)] = 0
            rank_zero_warn(f"{nan_elements} NaN values found in confusion matrix have been replaced with zeros.")
    return confmat


def _multilabel_confusion_matrix_format(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, ignore_index: Optional[int] = None
):
    """Convert all input to label format.

    - If preds tensor is floating point, applies sigmoid if pred tensor not in [0,1] range
    - If preds tensor is floating point, thresholds afterwards
    - Mask all elements that should be ignored with negative numbers for later filtration
    """
    if preds.is_floating_point():
        preds = torch.where(torch.all((0 <= preds) * (preds <= 1)), preds, preds.sigmoid())
        preds = preds > threshold
    preds = torch.movedim(preds, 1, -1).reshape(-1, num_labels)
    target = torch.movedim(target, 1, -1).reshape(-1, num_labels)

    if ignore_index is not None:
        preds = preds.clone()
        target = target.clone()
        # Make sure that when we map, it will always result in a negative number that we can filter away
        # Each label correspond to a 2x2 matrix = 4 elements per label
        idx = target == ignore_index
        preds = preds.masked_fill(idx, -4 * num_labels)
        target = target.masked_fill(idx, -4 * num_labels)

    return preds, target


def _multilabel_confusion_matrix_update(preds: Tensor, target: Tensor, num_labels: int) -> Tensor:
    """Computes the bins to update the confusion matrix with."""
    unique_mapping = ((2 * target + preds) + 4 * torch.arange(num_labels, device=preds.device)).flatten()
    valid = unique_mapping >= 0
    bins = torch.zeros(4 * num_labels, dtype=torch.long, device=preds.device)
    bins = bins.scatter_add_(0, unique_mapping.clamp(min=0).long(), valid.long())
    return bins.reshape(num_labels, 2, 2)


def multilabel_confusion_matrix(preds, target, num_labels, threshold=0.5, ignore_index=None, normalize=None):
    preds, target = _multilabel_confusion_matrix_format(preds, target, num_labels, threshold, ignore_index)
    confmat = _multilabel_confusion_matrix_update(preds, target, num_labels)
    return _confusion_matrix_reduce(confmat, normalize)


def make():
    return multilabel_confusion_matrix


def inputs():
    g = torch.Generator().manual_seed(6)
    t = lambda *s: torch.randint(0, 2, s, generator=g)
    out = [
        (torch.rand(6, 3, generator=g), t(6, 3), 3),                          # probabilities
        (torch.randn(6, 3, generator=g) * 3, t(6, 3), 3),                     # logits -> sigmoid
        (t(5, 3), t(5, 3), 3),                                                # integer labels
        (torch.rand(4, 2, 5, generator=g), t(4, 2, 5), 2, 0.3),               # extra dim, other threshold
    ]
    tgt = t(6, 3)
    tgt[0, 1] = -1
    tgt[3, :] = -1
    out.append((torch.randn(6, 3, generator=g), tgt, 3, 0.5, -1))           # ignore_index, logits
    tgt = t(5, 3)
    tgt[:, 2] = 255
    out.append((torch.rand(5, 3, generator=g), tgt, 3, 0.5, 255, "true"))     # a label fully ignored
    out.append((t(6, 2), t(6, 2), 2, 0.5, None, "pred"))
    out.append((torch.rand(7, 4, generator=g), t(7, 4), 4, 0.5, None, "all"))
    tgt = t(4, 3)
    tgt[1, 0] = -1
    out.append((t(4, 3), tgt, 3, 0.5, -1, "true"))                            # integer preds with ignore
    return out
