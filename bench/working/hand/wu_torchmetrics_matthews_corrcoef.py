"""Hand rewrite of wu_torchmetrics_matthews_corrcoef (partial: the dtype-changing returns stay)."""
import torch
from torch import Tensor


def _matthews_corrcoef_reduce(confmat: Tensor) -> Tensor:
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

    if confmat.numel() == 4:
        # when denom == 0 here, a zero row or column zeros one of tp/tn and one of fp/fn, so the
        # source's `a = tp + tn` and `b = fp + fn` are both assigned
        eps = torch.tensor(torch.finfo(torch.float32).eps, dtype=torch.float32, device=confmat.device)
        degenerate = denom == 0
        numerator = torch.where(degenerate, torch.sqrt(eps) * ((tp + tn) - (fp + fn)), numerator)
        denom = torch.where(
            degenerate, (tp + fp + eps) * (tp + fn + eps) * (tn + fp + eps) * (tn + fn + eps), denom
        )
        return numerator / torch.sqrt(denom)
    if denom == 0:
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
