"""torchmetrics functional `spearman_corrcoef` — hand rewrite.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/spearman.py

HAND: `_rank_data` computes every element's average rank in closed form,
`#(x < x_i) + (#(x == x_i) + 1) / 2`, from a pairwise comparison matrix: the same value as the mean
of the tied positions (exact in floating point for these sizes), with no nonzero, boolean-mask
gather or Python loop over a tensor. Domain: inputs without NaN.
"""
import torch

KIND = "nonzero + loop over tensor"


def _rank_data(data):
    """Calculate the rank for each element of a tensor (ties get the mean of their ranks)."""
    less = (data.unsqueeze(0) < data.unsqueeze(1)).sum(1).to(data.dtype)
    equal = (data.unsqueeze(0) == data.unsqueeze(1)).sum(1).to(data.dtype)
    return less + (equal + 1) / 2


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
