"""torchmetrics `R2Score` — hand rewrite.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/r2.py

HAND: the `num_obs < 2` check and the two adjusted-r2 warnings run in ordered custom ops
(`ws_r2::check_num_obs`, `ws_r2::warn_adjusted`) that read the 0-d state at run time and raise/warn
with the same text; the boolean-mask assignments become `torch.where` with a safe denominator; the
adjusted formula is selected with `torch.where` (denominator made safe where it is not used).
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


@torch.library.custom_op("ws_r2::check_num_obs", mutates_args=())
def _check_num_obs(num_obs: torch.Tensor) -> None:
    if int(num_obs) < 2:
        raise ValueError("Needs at least two samples to calculate r2 score.")


@_check_num_obs.register_fake
def _(num_obs):
    return None


@torch.library.custom_op("ws_r2::warn_adjusted", mutates_args=())
def _warn_adjusted(num_obs: torch.Tensor, adjusted: int) -> None:
    n = int(num_obs)
    if adjusted > n - 1:
        rank_zero_warn(
            "More independent regressions than data points in"
            " adjusted r2 score. Falls back to standard r2 score.",
            UserWarning,
        )
    elif adjusted == n - 1:
        rank_zero_warn("Division by zero in adjusted r2 score. Falls back to standard r2 score.", UserWarning)


@_warn_adjusted.register_fake
def _(num_obs, adjusted):
    return None


torch.library._register_effectful_op("ws_r2::check_num_obs", torch.library.EffectType.ORDERED)
torch.library._register_effectful_op("ws_r2::warn_adjusted", torch.library.EffectType.ORDERED)


def _r2_score_compute(sum_squared_obs, sum_obs, rss, num_obs, adjusted=0, multioutput="uniform_average"):
    if isinstance(num_obs, torch.Tensor):
        _check_num_obs(num_obs)
    elif num_obs < 2:
        raise ValueError("Needs at least two samples to calculate r2 score.")

    mean_obs = sum_obs / num_obs
    tss = sum_squared_obs - sum_obs * mean_obs

    # Account for near constant targets
    cond_rss = ~torch.isclose(rss, torch.zeros_like(rss), atol=1e-4)
    cond_tss = ~torch.isclose(tss, torch.zeros_like(tss), atol=1e-4)
    cond = cond_rss & cond_tss

    safe_tss = torch.where(cond, tss, torch.ones_like(tss))
    raw_scores = torch.where(cond, 1 - (rss / safe_tss), torch.ones_like(rss))
    raw_scores = torch.where(cond_rss & ~cond_tss, torch.zeros_like(raw_scores), raw_scores)

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
        _warn_adjusted(num_obs, adjusted)
        ok = adjusted < num_obs - 1
        denom = torch.where(ok, num_obs - adjusted - 1, torch.ones_like(num_obs))
        return torch.where(ok, 1 - (1 - r2) * (num_obs - 1) / denom, r2)
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
