"""torchmetrics `MeanMetric` tracking the running training loss inside a LightningModule-style step
(`self.train_loss.update(loss)` every batch): with the default `nan_strategy="warn"` NaN values (or NaN
weights) are dropped with a warning before the weighted sum is accumulated.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/aggregation.py
(`BaseAggregator._cast_and_nan_check_input`, `MeanMetric.update`, `MeanMetric.compute`) and
https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/utilities/prints.py
(`rank_zero_only`, `_warn`, `rank_zero_warn`). The metric states are module buffers (torchmetrics' `add_state`),
persistent here so that the comparison sees them.

Breaks: `if nans.any() or nans_weight.any():` (data-dependent branch), `rank_zero_warn(...)` (a
`warnings.warn` call), `x = x[~(nans | nans_weight)]` (boolean-mask gather, data-dependent size) and the
`value.numel() == 0` early return that follows.

HAND: the warning moves into a `torch.library.custom_op` with an ORDERED effect that issues the same
UserWarning (once per update with NaNs) at run time; dropped entries get value 0 and weight 0 instead of
being removed, which adds nothing to either sum (an all-NaN update leaves the states unchanged, as the
early return does).
"""

from functools import wraps
from typing import Optional, Union
import warnings

import torch
from torch import Tensor, nn
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op


def rank_zero_only(fn):
    """Wrap a function to call internal function only in rank zero."""

    @wraps(fn)
    def wrapped_fn(*args, **kwargs):
        rank = getattr(rank_zero_only, "rank", None)
        if rank is None:
            raise RuntimeError("The `rank_zero_only.rank` needs to be set before use")
        if rank == 0:
            return fn(*args, **kwargs)
        return None

    return wrapped_fn


rank_zero_only.rank = 0


def _warn(*args, **kwargs) -> None:
    warnings.warn(*args, **kwargs)


rank_zero_warn = rank_zero_only(_warn)


@torch.library.custom_op("blind_c_torchmetrics::warn_dropped_nans", mutates_args=())
def _warn_dropped_nans(dropped: Tensor) -> None:
    if dropped.any():
        rank_zero_warn("Encountered `nan` values in tensor. Will be removed.", UserWarning)


@_warn_dropped_nans.register_fake
def _(dropped):
    return None


_register_effectful_op(torch.ops.blind_c_torchmetrics.warn_dropped_nans.default, _EffectType.ORDERED)


class BaseAggregator(nn.Module):
    def __init__(self, default_value, nan_strategy="warn", state_name="value"):
        super().__init__()
        allowed_nan_strategy = ("error", "warn", "ignore", "disable")
        if nan_strategy not in allowed_nan_strategy and not isinstance(nan_strategy, float):
            raise ValueError(
                f"Arg `nan_strategy` should either be a float or one of {allowed_nan_strategy} but got {nan_strategy}."
            )
        self.nan_strategy = nan_strategy
        self.dtype = torch.get_default_dtype()
        self.register_buffer(state_name, default_value)
        self.state_name = state_name

    def _cast_and_nan_check_input(
        self, x: Union[float, Tensor], weight: Optional[Union[float, Tensor]] = None
    ) -> tuple[Tensor, Tensor]:
        """Convert input ``x`` to a tensor and check for Nans."""
        if not isinstance(x, Tensor):
            x = torch.as_tensor(x, dtype=self.dtype, device=self.device)
        if weight is not None and not isinstance(weight, Tensor):
            weight = torch.as_tensor(weight, dtype=self.dtype, device=self.device)

        if self.nan_strategy != "disable":
            nans = torch.isnan(x)
            if weight is not None:
                nans_weight = torch.isnan(weight)
            else:
                nans_weight = torch.zeros_like(nans).bool()
                weight = torch.ones_like(x)
            if self.nan_strategy in ("ignore", "warn"):
                # dropped entries get value 0 and weight 0: they add nothing to the weighted sums
                dropped = nans | nans_weight
                if self.nan_strategy == "warn":
                    _warn_dropped_nans(dropped)
                x = torch.where(dropped, 0.0, x)
                weight = torch.where(dropped, 0.0, weight)
            elif nans.any() or nans_weight.any():
                if self.nan_strategy == "error":
                    raise RuntimeError("Encountered `nan` values in tensor")
                if self.nan_strategy in ("ignore", "warn"):
                    if self.nan_strategy == "warn":
                        rank_zero_warn("Encountered `nan` values in tensor. Will be removed.", UserWarning)
                    x = x[~(nans | nans_weight)]
                    weight = weight[~(nans | nans_weight)]
                else:
                    if not isinstance(self.nan_strategy, float):
                        raise ValueError(f"`nan_strategy` shall be float but you pass {self.nan_strategy}")
                    x[nans | nans_weight] = self.nan_strategy
                    weight[nans | nans_weight] = 1
        else:
            weight = torch.ones_like(x)
        return x.to(self.dtype), weight.to(self.dtype)


class MeanMetric(BaseAggregator):
    mean_value: Tensor
    weight: Tensor

    def __init__(self, nan_strategy="warn"):
        super().__init__(torch.tensor(0.0, dtype=torch.get_default_dtype()), nan_strategy, state_name="mean_value")
        self.register_buffer("weight", torch.tensor(0.0, dtype=torch.get_default_dtype()))

    def update(self, value: Union[float, Tensor], weight: Union[float, Tensor, None] = None) -> None:
        """Update state with data."""
        # broadcast weight to value shape
        if not isinstance(value, Tensor):
            value = torch.as_tensor(value, dtype=self.dtype, device=self.device)
        if weight is None:
            weight = torch.ones_like(value)
        elif not isinstance(weight, Tensor):
            weight = torch.as_tensor(weight, dtype=self.dtype, device=self.device)
        weight = torch.broadcast_to(weight, value.shape)
        value, weight = self._cast_and_nan_check_input(value, weight)

        if value.numel() == 0:
            return
        self.mean_value += (value * weight).sum()
        self.weight += weight.sum()

    def compute(self) -> Tensor:
        """Compute the aggregated value."""
        return self.mean_value / self.weight


class LitRegressor(nn.Module):
    """The part of a LightningModule's `training_step` that updates its loss tracker."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.train_loss = MeanMetric()

    def forward(self, x, y, sample_weight=None):
        pred = self.net(x).squeeze(-1)
        loss = (pred - y) ** 2  # per-sample loss (NaN targets stand for missing labels)
        self.train_loss.update(loss.detach(), sample_weight)
        return loss.nanmean(), self.train_loss.compute()


def make():
    torch.manual_seed(0)
    return LitRegressor()


def inputs():
    g = torch.Generator().manual_seed(0)
    nan = float("nan")
    return [
        (torch.randn(4, 3, generator=g), torch.randn(4, generator=g)),
        (torch.randn(3, 3, generator=g), torch.tensor([0.5, nan, -1.0])),
        (torch.randn(5, 3, generator=g), torch.randn(5, generator=g), torch.tensor([1.0, 2.0, 0.5, 1.0, 1.0])),
        (torch.randn(2, 3, generator=g), torch.tensor([nan, nan])),                       # all dropped
        (torch.randn(4, 3, generator=g), torch.randn(4, generator=g), torch.tensor([1.0, nan, 1.0, 2.0])),
        (torch.randn(3, 3, generator=g), torch.tensor([nan, 0.3, 1.2]), torch.tensor([2.0, nan, 1.0])),
        (torch.randn(6, 3, generator=g), torch.randn(6, generator=g)),
        (torch.randn(2, 3, generator=g), torch.tensor([1.5, -0.5]), torch.tensor(3.0)),   # broadcast weight
    ]


KIND = "branch-warn-bool-mask"
