"""torchmetrics `R2Score` (module metric): `update` accumulates sums into tensor states, `compute`
calls `_r2_score_compute`, whose checks compare the tensor state `total` with Python ints.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/r2.py
(_r2_score_update, _r2_score_compute) and src/torchmetrics/regression/r2.py (R2Score states).
`rank_zero_warn` is reduced to a `warnings.warn` wrapper (rank 0); forward = update then compute.

Breaks: `if num_obs < 2:` (raise) and `if adjusted > num_obs - 1:` / `elif adjusted == num_obs - 1:`
(warnings) are data-dependent branches on the 0-d tensor state `total`; `warnings.warn` inside
`rank_zero_warn` is a skipped function; `raw_scores[cond] = 1 - (rss[cond] / tss[cond])` gathers with a
boolean mask (dynamic shape; the scalar assignment `raw_scores[cond_rss & ~cond_tss] = 0.0` traces).

HAND: the checks become an ordered `torch.library.custom_op` that raises/warns with the same messages
at run time; the masked assignments become `torch.where` with a safe denominator; the adjusted branch
becomes `torch.where` over the two warning conditions.
"""
import warnings

import torch
from torch import nn

KIND = "tensor-state branch + mask assign"


def rank_zero_warn(message, category=UserWarning):
    warnings.warn(message, category)


def _r2_score_update(preds, target):
    if preds.shape != target.shape:
        raise RuntimeError("Predictions and targets are expected to have the same shape")
    if preds.ndim > 2:
        raise ValueError(
            "Expected both prediction and target to be 1D or 2D tensors,"
            f" but received tensors with dimension {preds.shape}"
        )
    sum_obs = torch.sum(target, dim=0)
    sum_squared_obs = torch.sum(target * target, dim=0)
    residual = target - preds
    rss = torch.sum(residual * residual, dim=0)
    return sum_squared_obs, sum_obs, rss, target.size(0)


def _r2_score_compute(sum_squared_obs, sum_obs, rss, num_obs, adjusted=0, multioutput="uniform_average"):
    if num_obs < 2:
        raise ValueError("Needs at least two samples to calculate r2 score.")

    mean_obs = sum_obs / num_obs
    tss = sum_squared_obs - sum_obs * mean_obs

    # Account for near constant targets
    cond_rss = ~torch.isclose(rss, torch.zeros_like(rss), atol=1e-4)
    cond_tss = ~torch.isclose(tss, torch.zeros_like(tss), atol=1e-4)
    cond = cond_rss & cond_tss

    raw_scores = torch.ones_like(rss)
    raw_scores[cond] = 1 - (rss[cond] / tss[cond])
    raw_scores[cond_rss & ~cond_tss] = 0.0

    if multioutput == "raw_values":
        r2 = raw_scores
    elif multioutput == "uniform_average":
        r2 = torch.mean(raw_scores)
    elif multioutput == "variance_weighted":
        tss_sum = torch.sum(tss)
        r2 = torch.sum(tss / tss_sum * raw_scores)
    else:
        raise ValueError(
            "Argument `multioutput` must be either `raw_values`,"
            f" `uniform_average` or `variance_weighted`. Received {multioutput}."
        )

    if adjusted < 0 or not isinstance(adjusted, int):
        raise ValueError("`adjusted` parameter should be an integer larger or equal to 0.")

    if adjusted != 0:
        if adjusted > num_obs - 1:
            rank_zero_warn(
                "More independent regressions than data points in"
                " adjusted r2 score. Falls back to standard r2 score.",
                UserWarning,
            )
        elif adjusted == num_obs - 1:
            rank_zero_warn("Division by zero in adjusted r2 score. Falls back to standard r2 score.", UserWarning)
        else:
            return 1 - (1 - r2) * (num_obs - 1) / (num_obs - adjusted - 1)
    return r2


class R2Score(nn.Module):
    def __init__(self, num_outputs=1, adjusted=0, multioutput="uniform_average"):
        super().__init__()
        self.num_outputs = num_outputs
        self.adjusted = adjusted
        self.multioutput = multioutput
        self.register_buffer("sum_squared_error", torch.zeros(num_outputs))
        self.register_buffer("sum_error", torch.zeros(num_outputs))
        self.register_buffer("residual", torch.zeros(num_outputs))
        self.register_buffer("total", torch.tensor(0))

    def update(self, preds, target):
        sum_squared_obs, sum_obs, rss, num_obs = _r2_score_update(preds, target)
        self.sum_squared_error += sum_squared_obs
        self.sum_error += sum_obs
        self.residual += rss
        self.total += num_obs

    def compute(self):
        return _r2_score_compute(
            self.sum_squared_error, self.sum_error, self.residual, self.total, self.adjusted, self.multioutput
        )

    def forward(self, preds, target):
        self.update(preds, target)
        return self.compute()


class R2Battery(nn.Module):
    """Three R2Score metrics as a model's eval step uses them: plain, adjusted, multi-output."""

    def __init__(self):
        super().__init__()
        self.plain = R2Score()
        self.adj = R2Score(adjusted=3)
        self.multi = R2Score(num_outputs=2, multioutput="raw_values")
        self.weighted = R2Score(num_outputs=2, multioutput="variance_weighted", adjusted=1)
        self.single = R2Score()

    def forward(self, preds, target, which):
        return getattr(self, which)(preds, target)


def make():
    torch.manual_seed(0)
    return R2Battery()


def inputs():
    torch.manual_seed(0)
    p1, t1 = torch.randn(6), torch.randn(6)
    p2, t2 = torch.randn(5, 2), torch.randn(5, 2)
    return [
        (p1, t1, "plain"),
        (p1[:2], t1[:2], "adj"),  # total 2: adjusted 3 > 1 -> warning
        (p1[:2], t1[:2], "adj"),  # total 4: adjusted 3 == 3 -> division-by-zero warning
        (p1, t1, "adj"),  # total 10: adjusted formula
        (p2, t2, "multi"),
        (p2, torch.stack([t2[:, 0], torch.full((5,), 2.0)], 1), "multi"),  # constant target column
        (p2, t2, "weighted"),
        (t1, t1, "plain"),  # perfect predictions: rss ~ 0
        (p1[:1], t1[:1], "weighted"),
    ]


def failing_inputs():
    torch.manual_seed(1)
    return [(torch.randn(1), torch.randn(1), "single")]  # total 1 -> "Needs at least two samples"
