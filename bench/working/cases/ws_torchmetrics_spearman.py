"""torchmetrics functional `spearman_corrcoef`: ranks with ties averaged (`_rank_data`), then Pearson
on the ranks.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/spearman.py
(_find_repeats, _rank_data, _spearman_corrcoef_update, _spearman_corrcoef_compute, spearman_corrcoef).
`_check_same_shape` / `_check_data_shape_to_num_outputs` are inlined as small shape checks.

Breaks: `_find_repeats` gathers with boolean masks (`temp[change]`, `unique[atleast2]`) and calls
`torch.nonzero` (dynamic output shapes); `_rank_data` loops in Python over the resulting tensor
(`for r in repeats:`) and does masked gather/assign `rank[condition] = rank[condition].mean()`.

HAND: the average rank of every element is computed in closed form, `#(x < x_i) + (#(x == x_i) + 1) / 2`,
with a pairwise comparison matrix (exactly the mean of the tied positions, no data-dependent shapes).
Domain: inputs without NaN, as the source's tests use.
"""
import torch

KIND = "nonzero + loop over tensor"


def _find_repeats(data):
    """Find and return values which have repeats i.e. the same value are more than once in the tensor."""
    temp = data.detach().clone()
    temp = temp.sort()[0]

    change = torch.cat([torch.tensor([True], device=temp.device), temp[1:] != temp[:-1]])
    unique = temp[change]
    change_idx = torch.cat([torch.nonzero(change), torch.tensor([[temp.numel()]], device=temp.device)]).flatten()
    freq = change_idx[1:] - change_idx[:-1]
    atleast2 = freq > 1
    return unique[atleast2]


def _rank_data(data):
    """Calculate the rank for each element of a tensor (ties get the mean of their ranks)."""
    n = data.numel()
    rank = torch.empty_like(data)
    idx = data.argsort()
    rank[idx[:n]] = torch.arange(1, n + 1, dtype=data.dtype, device=data.device)

    repeats = _find_repeats(data)
    for r in repeats:
        condition = data == r
        rank[condition] = rank[condition].mean()
    return rank


def _spearman_corrcoef_update(preds, target, num_outputs):
    if not (preds.is_floating_point() and target.is_floating_point()):
        raise TypeError(
            "Expected `preds` and `target` both to be floating point tensors,"
            f" but got {preds.dtype} and {target.dtype}"
        )
    if preds.shape != target.shape:
        raise RuntimeError(
            f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}."
        )
    if preds.ndim > 2 or (num_outputs == 1 and preds.ndim != 1) or (num_outputs > 1 and num_outputs != preds.shape[1]):
        raise ValueError(f"Expected argument `num_outputs` to match the second dimension of input, but got {num_outputs}.")
    return preds, target


def _spearman_corrcoef_compute(preds, target, eps=1e-6):
    if preds.ndim == 1:
        preds = _rank_data(preds)
        target = _rank_data(target)
    else:
        preds = torch.stack([_rank_data(p) for p in preds.T]).T
        target = torch.stack([_rank_data(t) for t in target.T]).T

    preds_diff = preds - preds.mean(0)
    target_diff = target - target.mean(0)

    cov = (preds_diff * target_diff).mean(0)
    preds_std = torch.sqrt((preds_diff * preds_diff).mean(0))
    target_std = torch.sqrt((target_diff * target_diff).mean(0))

    corrcoef = cov / (preds_std * target_std + eps)
    return torch.clamp(corrcoef, -1.0, 1.0)


def spearman_corrcoef(preds, target):
    preds, target = _spearman_corrcoef_update(preds, target, num_outputs=1 if preds.ndim == 1 else preds.shape[-1])
    return _spearman_corrcoef_compute(preds, target)


def make():
    return spearman_corrcoef


def inputs():
    torch.manual_seed(0)
    a, b = torch.randn(8), torch.randn(8)
    ties = torch.tensor([1.0, 2.0, 2.0, 3.0, 1.0, 5.0, 2.0, 0.5])
    ties2 = torch.tensor([0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    return [
        (ties, b),
        (a, b),
        (ties, ties2),
        (a, a),
        (a, -a),
        (torch.randint(0, 3, (10,)).float(), torch.randint(0, 3, (10,)).float()),
        (torch.randn(6, 2), torch.randn(6, 2)),
        (torch.stack([ties, a], 1), torch.stack([ties2, b], 1)),
        (torch.full((5,), 2.0), torch.randn(5)),
        (torch.randn(7, dtype=torch.float64), torch.randn(7, dtype=torch.float64).round()),
    ]


def failing_inputs():
    return [(torch.arange(5), torch.arange(5))]
