"""torchmetrics functional pearson_corrcoef (_pearson_corrcoef_update + _pearson_corrcoef_compute).

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/pearson.py
(checks from src/torchmetrics/utilities/checks.py and functional/regression/utils.py; rank_zero_warn
reduced to warnings.warn).

Breaks: `cond = num_prior.mean() > 0 or num_obs == 1` (Python `or` on a tensor),
`if (var_x < bound).any() or (var_y < bound).any(): rank_zero_warn(...)`, `if valid_mask.any():`,
and the boolean-mask gathers/assignment `corrcoef[valid_mask] = corr_xy[valid_mask] / ...`.

HAND: `num_obs == 1` is static, so only the tensor half of `cond` goes into `torch.where` for the
running mean/variance updates (the `preds.var(0)` branch is evaluated only when num_obs > 1, so
no extra "degrees of freedom" warning); the near-zero-variance warning is emitted by a
`torch.library.custom_op` with an ORDERED effect taking the 0-d flag; the masked assignment becomes
`torch.where(valid, corr / sqrt(vx*vy), nan)` and the clamp is applied unconditionally (clamp
keeps nan, so skipping it when nothing is valid changes nothing).
"""
import math
import warnings

import torch
from torch import Tensor

KIND = "tensor or/any branch + warn + mask assign"


def rank_zero_warn(message, category=UserWarning):
    warnings.warn(message, category, stacklevel=2)


def _check_same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise RuntimeError(
            f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}."
        )


def _check_data_shape_to_num_outputs(
    preds: Tensor, target: Tensor, num_outputs: int, allow_1d_reshape: bool = False
) -> None:
    if preds.ndim > 2 or target.ndim > 2:
        raise ValueError(
            f"Expected both predictions and target to be either 1- or 2-dimensional tensors,"
            f" but got {target.ndim} and {preds.ndim}."
        )
    cond1 = False
    if not allow_1d_reshape:
        cond1 = num_outputs == 1 and not (preds.ndim == 1 or preds.shape[1] == 1)
    cond2 = num_outputs > 1 and preds.ndim > 1 and num_outputs != preds.shape[1]
    if cond1 or cond2:
        raise ValueError(
            f"Expected argument `num_outputs` to match the second dimension of input, but got {num_outputs}"
            f" and {preds.shape[1]}."
        )


def _pearson_corrcoef_update(preds, target, mean_x, mean_y, var_x, var_y, corr_xy, num_prior, num_outputs):
    # Data checking
    _check_same_shape(preds, target)
    _check_data_shape_to_num_outputs(preds, target, num_outputs)
    num_obs = preds.shape[0]
    cond = num_prior.mean() > 0 or num_obs == 1

    if cond:
        mx_new = (num_prior * mean_x + preds.sum(0)) / (num_prior + num_obs)
        my_new = (num_prior * mean_y + target.sum(0)) / (num_prior + num_obs)
    else:
        mx_new = preds.mean(0).to(mean_x.dtype)
        my_new = target.mean(0).to(mean_y.dtype)

    num_prior += num_obs

    if cond:
        var_x += ((preds - mx_new) * (preds - mean_x)).sum(0)
        var_y += ((target - my_new) * (target - mean_y)).sum(0)
    else:
        var_x += preds.var(0) * (num_obs - 1)
        var_y += target.var(0) * (num_obs - 1)
    corr_xy += ((preds - mx_new) * (target - mean_y)).sum(0)
    mean_x = mx_new
    mean_y = my_new

    return mean_x, mean_y, var_x, var_y, corr_xy, num_prior


def _pearson_corrcoef_compute(var_x, var_y, corr_xy, nb):
    # prevent overwrite the inputs
    var_x = var_x / (nb - 1)
    var_y = var_y / (nb - 1)
    corr_xy = corr_xy / (nb - 1)
    # if var_x, var_y is float16 and on cpu, make it bfloat16 as sqrt is not supported for float16
    if var_x.dtype == torch.float16 and var_x.device == torch.device("cpu"):
        var_x = var_x.bfloat16()
        var_y = var_y.bfloat16()

    bound = math.sqrt(torch.finfo(var_x.dtype).eps)
    if (var_x < bound).any() or (var_y < bound).any():
        rank_zero_warn(
            "The variance of predictions or target is close to zero. This can cause instability in Pearson correlation"
            "coefficient, leading to wrong results. Consider re-scaling the input if possible or computing using a"
            f"larger dtype (currently using {var_x.dtype}). Setting the correlation coefficient to nan.",
            UserWarning,
        )

    zero_var_mask = (var_x < bound) | (var_y < bound)
    corrcoef = torch.full_like(corr_xy, float("nan"), device=corr_xy.device, dtype=corr_xy.dtype)
    valid_mask = ~zero_var_mask

    if valid_mask.any():
        corrcoef[valid_mask] = (
            (corr_xy[valid_mask] / (var_x[valid_mask] * var_y[valid_mask]).sqrt()).squeeze().to(corrcoef.dtype)
        )
        corrcoef = torch.clamp(corrcoef, -1.0, 1.0)
    return corrcoef.squeeze()


def pearson_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    d = preds.shape[1] if preds.ndim == 2 else 1
    _temp = torch.zeros(d, dtype=preds.dtype, device=preds.device)
    mean_x, mean_y, var_x = _temp.clone(), _temp.clone(), _temp.clone()
    var_y, corr_xy, nb = _temp.clone(), _temp.clone(), _temp.clone()
    _, _, var_x, var_y, corr_xy, nb = _pearson_corrcoef_update(
        preds, target, mean_x, mean_y, var_x, var_y, corr_xy, nb, num_outputs=1 if preds.ndim == 1 else preds.shape[-1]
    )
    return _pearson_corrcoef_compute(var_x, var_y, corr_xy, nb)


def make():
    return pearson_corrcoef


def _r(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def inputs():
    x2 = _r(6, 3, seed=5)
    x2[:, 1] = 2.0                       # one constant output column -> warn, partly valid
    return [
        (torch.tensor([2.5, 0.0, 2.0, 8.0]), torch.tensor([3.0, -0.5, 2.0, 7.0])),
        (_r(10, seed=1), _r(10, seed=2)),
        (torch.full((5,), 3.0), _r(5, seed=3)),            # zero variance -> warn, nan
        (torch.tensor([[2.5, 0.0], [2.0, 8.0]]), torch.tensor([[3.0, -0.5], [2.0, 7.0]])),
        (x2, _r(6, 3, seed=6)),
        (torch.tensor([1.0]), torch.tensor([2.0])),        # num_obs == 1 branch
        (_r(7, seed=7).double(), _r(7, seed=8).double()),
        (torch.ones(4, 2), torch.zeros(4, 2)),             # nothing valid
        (_r(3, seed=9), -2 * _r(3, seed=9) + 1),           # perfectly anti-correlated (clamp)
    ]


def failing_inputs():
    return [
        (torch.randn(4), torch.randn(5)),
        (torch.randn(2, 2, 2), torch.randn(2, 2, 2)),
    ]
