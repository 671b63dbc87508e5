"""pytorch-forecasting's multi-horizon metric (here its QuantileLoss): per-step quantile losses are
masked beyond each series' length, summed, and a non-finite sum is reset to 1e9 with a warning
before it is accumulated into the metric's running state.

Source: https://github.com/sktime/pytorch-forecasting/blob/main/pytorch_forecasting/metrics/base_metrics.py
(`MultiHorizonMetric.update`, `_update_losses_and_lengths`, `mask_losses`, `reduce_loss`,
`compute`) and .../metrics/quantile.py (`QuantileLoss.loss`). The torchmetrics `add_state` states
are buffers here and `forward` is update-then-compute.

Breaks: `if not torch.isfinite(losses):` (data-dependent branch) with `warnings.warn(...)` inside.

HAND: the reset becomes `torch.where(torch.isfinite(losses), losses, 1e9)` and the warning moves into
a `torch.library.custom_op` with an ORDERED effect that issues the same UserWarning at run time iff
the sum is not finite.
"""
import warnings
from typing import List

import torch
from torch import nn


def unsqueeze_like(tensor: torch.Tensor, like: torch.Tensor):
    n_unsqueezes = like.ndim - tensor.ndim
    if n_unsqueezes < 0:
        raise ValueError(f"tensor.ndim={tensor.ndim} > like.ndim={like.ndim}")
    elif n_unsqueezes == 0:
        return tensor
    else:
        return tensor[(...,) + (None,) * n_unsqueezes]


class MultiHorizonMetric(nn.Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction
        self.register_buffer("losses", torch.tensor(0.0))
        self.register_buffer("lengths", torch.tensor(0))

    def loss(self, y_pred, target):
        raise NotImplementedError()

    def update(self, y_pred, target, lengths=None):
        # unpack weight
        if isinstance(target, (list, tuple)):
            target, weight = target
        else:
            weight = None

        # unpack target
        if lengths is None:
            lengths = torch.full(
                (target.size(0),),
                fill_value=target.size(1),
                dtype=torch.long,
                device=target.device,
            )

        losses = self.loss(y_pred, target)
        # weight samples
        if weight is not None:
            losses = losses * unsqueeze_like(weight, losses)
        self._update_losses_and_lengths(losses, lengths)

    def _update_losses_and_lengths(self, losses: torch.Tensor, lengths: torch.Tensor):
        losses = self.mask_losses(losses, lengths)
        if self.reduction == "none":
            if self.losses.ndim == 0:
                self.losses = losses
                self.lengths = lengths
            else:
                self.losses = torch.cat([self.losses, losses], dim=0)
                self.lengths = torch.cat([self.lengths, lengths], dim=0)
        else:
            losses = losses.sum()
            if not torch.isfinite(losses):
                losses = torch.tensor(1e9, device=losses.device)
                warnings.warn("Loss is not finite. Resetting it to 1e9")
            self.losses = self.losses + losses
            self.lengths = self.lengths + lengths.sum()

    def compute(self):
        loss = self.reduce_loss(self.losses, lengths=self.lengths)
        return loss

    def mask_losses(self, losses: torch.Tensor, lengths: torch.Tensor, reduction: str = None) -> torch.Tensor:
        if reduction is None:
            reduction = self.reduction
        if losses.ndim > 0:
            # mask loss
            mask = torch.arange(losses.size(1), device=losses.device).unsqueeze(
                0
            ) >= lengths.unsqueeze(-1)
            if losses.ndim > 2:
                mask = mask.unsqueeze(-1)
                dim_normalizer = losses.size(-1)
            else:
                dim_normalizer = 1.0
            # reduce to one number
            if reduction == "none":
                losses = losses.masked_fill(mask, float("nan"))
            else:
                losses = losses.masked_fill(mask, 0.0) / dim_normalizer
        return losses

    def reduce_loss(self, losses: torch.Tensor, lengths: torch.Tensor, reduction: str = None) -> torch.Tensor:
        if reduction is None:
            reduction = self.reduction
        if reduction == "none":
            return losses  # return immediately, no checks
        elif reduction == "mean":
            loss = losses.sum() / lengths.sum()
        elif reduction == "sqrt-mean":
            loss = losses.sum() / lengths.sum()
            loss = loss.sqrt()
        else:
            raise ValueError(f"reduction {reduction} unknown")
        return loss

    def forward(self, y_pred, target, lengths=None):
        self.update(y_pred, target, lengths)
        return self.compute()


class QuantileLoss(MultiHorizonMetric):
    def __init__(self, quantiles: List[float] = [0.1, 0.5, 0.9], **kwargs):
        super().__init__(**kwargs)
        self.quantiles = quantiles

    def loss(self, y_pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # calculate quantile loss
        losses = []
        for i, q in enumerate(self.quantiles):
            errors = target - y_pred[..., i]
            losses.append(torch.max((q - 1) * errors, q * errors).unsqueeze(-1))
        losses = 2 * torch.cat(losses, dim=2)

        return losses


def make():
    return QuantileLoss(quantiles=[0.1, 0.5, 0.9])


def inputs():
    g = torch.Generator().manual_seed(17)
    calls = []
    for n in range(9):
        y_pred = torch.randn(3, 6, 3, generator=g).sort(dim=-1).values
        target = torch.randn(3, 6, generator=g)
        lengths = None
        if n in (1, 5):
            target[2, 4] = float("inf")          # an exploding actual
        if n == 6:
            y_pred[0, 1, 2] = float("nan")       # a NaN forecast
        if n in (2, 5, 7):
            lengths = torch.tensor([6, 3, 4])    # a NaN/inf beyond a length is masked out
            if n == 7:
                target[1, 5] = float("nan")
        if n in (3, 8):
            target = (target, torch.tensor([1.0, 0.5, 2.0]))
        calls.append((y_pred, target, lengths))
    return calls


KIND = "branch-warnings"
