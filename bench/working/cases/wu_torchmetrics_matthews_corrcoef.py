"""torchmetrics' Matthews correlation coefficient, the reduction of an accumulated confusion matrix
that the BinaryMatthewsCorrCoef / MulticlassMatthewsCorrCoef / MultilabelMatthewsCorrCoef metrics call
in compute() (and the functional binary_/multiclass_/multilabel_matthews_corrcoef after the update).

Source: https://github.com/Lightning-AI/torchmetrics/blob/f2176ef3c4941f3cdd902e7ff89edf697c469d53/src/torchmetrics/functional/classification/matthews_corrcoef.py
(_matthews_corrcoef_reduce kept as written.)

Breaks: in the binary case, `if tp + tn != 0 and fp + fn == 0:` and `if tp + tn == 0 and fp + fn != 0:`
branch on counts of the confusion matrix (early returns of +1 / -1); `if denom == 0 and
confmat.numel() == 4:` / `elif denom == 0:` branch on the computed denominator, and inside the binary
degenerate case `if tp == 0 or tn == 0:` / `if fp == 0 or fn == 0:` on counts again.

HAND: partial — in the binary case the degenerate-denominator formula and the regular one are
both computed and selected with `torch.where(denom == 0, ...)` (whenever denom == 0 in the binary
case both `a = tp + tn` and `b = fp + fn` are assigned, as a zero row or column of a 2x2 matrix zeros
one of tp/tn and one of fp/fn); the two early returns (+1 and -1) and the multiclass `denom == 0`
return stay, because they return `torch.tensor(..., dtype=confmat.dtype)` — an int64 tensor for the
usual long confusion matrix — where the regular path returns float32: the output dtype depends on
the data.
"""
import torch
from torch import Tensor


def _matthews_corrcoef_reduce(confmat: Tensor) -> Tensor:
    """Reduce an un-normalized confusion matrix of shape (n_classes, n_classes) into the matthews corrcoef score.

    See: https://bmcgenomics.biomedcentral.com/articles/10.1186/s12864-019-6413-7 for more info.
    """
    # convert multilabel into binary
    confmat = confmat.sum(0) if confmat.ndim == 3 else confmat

    if confmat.numel() == 4:  # binary case
        tn, fp, fn, tp = confmat.reshape(-1)
        if tp + tn != 0 and fp + fn == 0:
            return torch.tensor(1.0, dtype=confmat.dtype, device=confmat.device)

        if tp + tn == 0 and fp + fn != 0:
            return torch.tensor(-1.0, dtype=confmat.dtype, device=confmat.device)

    tk = confmat.sum(dim=-1).float()
    pk = confmat.sum(dim=-2).float()
    c = torch.trace(confmat).float()
    s = confmat.sum().float()

    cov_ytyp = c * s - sum(tk * pk)
    cov_ypyp = s**2 - sum(pk * pk)
    cov_ytyt = s**2 - sum(tk * tk)

    numerator = cov_ytyp
    denom = cov_ypyp * cov_ytyt

    if denom == 0 and confmat.numel() == 4:
        if tp == 0 or tn == 0:
            a = tp + tn

        if fp == 0 or fn == 0:
            b = fp + fn

        eps = torch.tensor(torch.finfo(torch.float32).eps, dtype=torch.float32, device=confmat.device)
        numerator = torch.sqrt(eps) * (a - b)
        denom = (tp + fp + eps) * (tp + fn + eps) * (tn + fp + eps) * (tn + fn + eps)
    elif denom == 0:
        return torch.tensor(0, dtype=confmat.dtype, device=confmat.device)
    return numerator / torch.sqrt(denom)


KIND = "tensor-branch"


def make():
    torch.manual_seed(0)
    return _matthews_corrcoef_reduce


def inputs():
    g = torch.Generator().manual_seed(0)
    t = lambda rows: torch.tensor(rows, dtype=torch.long)
    return [
        (t([[5, 2], [1, 7]]),),  # binary, regular
        (t([[4, 0], [0, 6]]),),  # binary, all correct -> 1
        (t([[0, 3], [5, 0]]),),  # binary, all wrong -> -1
        (t([[0, 4], [0, 6]]),),  # binary, every prediction positive: denom == 0
        (t([[7, 0], [2, 0]]),),  # binary, every prediction negative: denom == 0
        (t([[0, 0], [3, 5]]),),  # binary, every target positive: denom == 0
        (torch.randint(0, 9, (3, 3), generator=g),),  # multiclass, regular
        (t([[3, 0, 0], [4, 0, 0], [2, 0, 0]]),),  # multiclass, one predicted class: denom == 0 -> 0
        (torch.randint(0, 6, (4, 2, 2), generator=g),),  # multilabel, summed to binary
        (t([[[2, 0], [0, 1]], [[1, 0], [0, 3]]]),),  # multilabel, all correct -> 1
    ]
