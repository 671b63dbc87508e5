"""MONAI FocalLoss (sigmoid/softmax focal loss with per-class weights) and MONAI's one_hot.

Source: https://github.com/Project-MONAI/MONAI/blob/dev/monai/losses/focal_loss.py (FocalLoss.forward,
        sigmoid_focal_loss, softmax_focal_loss) and
        https://github.com/Project-MONAI/MONAI/blob/dev/monai/networks/utils.py (one_hot)

Breaks: `if self.class_weight.min() < 0: raise ValueError(...)` branches on the value of the
`class_weight` buffer (data-dependent branch); on single-channel predictions `warnings.warn(...)`
("single channel prediction, `to_onehot_y=True` ignored.") is called inside forward.

(hand rewrite)
HAND: the weight check becomes an ordered custom op that raises the same ValueError at run time; the
warning is emitted by an ordered custom op that calls warnings.warn with the same text and category.
"""
from __future__ import annotations

import warnings
from enum import Enum

import torch
import torch.nn.functional as F
from torch.nn.modules.loss import _Loss

from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = "data-dependent raise + warn"

_NS = "wt_monai_focal"
if not hasattr(getattr(torch.ops, _NS), "check"):

    @torch.library.custom_op(f"{_NS}::check", mutates_args=())
    def _check_op(bad: torch.Tensor, msg: str) -> None:
        if bool(bad):
            raise ValueError(msg)

    @_check_op.register_fake
    def _(bad, msg):
        return None

    @torch.library.custom_op(f"{_NS}::warn", mutates_args=())
    def _warn_op(msg: str) -> None:
        warnings.warn(msg)

    @_warn_op.register_fake
    def _(msg):
        return None

    _register_effectful_op(getattr(torch.ops, _NS).check.default, _EffectType.ORDERED)
    _register_effectful_op(getattr(torch.ops, _NS).warn.default, _EffectType.ORDERED)


def _check(bad, msg):
    getattr(torch.ops, _NS).check(bad, msg)


def _warn(msg):
    getattr(torch.ops, _NS).warn(msg)
GRAD = True


class LossReduction(str, Enum):
    NONE = "none"
    MEAN = "mean"
    SUM = "sum"


def one_hot(labels: torch.Tensor, num_classes: int, dtype: torch.dtype = torch.float, dim: int = 1) -> torch.Tensor:
    # if `dim` is bigger, add singleton dim at the end
    if labels.ndim < dim + 1:
        shape = list(labels.shape) + [1] * (dim + 1 - len(labels.shape))
        labels = torch.reshape(labels, shape)

    sh = list(labels.shape)

    if sh[dim] != 1:
        raise AssertionError("labels should have a channel with length equal to one.")

    sh[dim] = num_classes

    o = torch.zeros(size=sh, dtype=dtype, device=labels.device)
    labels = o.scatter_(dim=dim, index=labels.long(), value=1)

    return labels


class FocalLoss(_Loss):
    def __init__(
        self,
        include_background: bool = True,
        to_onehot_y: bool = False,
        gamma: float = 2.0,
        alpha: float | None = None,
        weight=None,
        reduction: LossReduction | str = LossReduction.MEAN,
        use_softmax: bool = False,
    ) -> None:
        super().__init__(reduction=LossReduction(reduction).value)
        self.include_background = include_background
        self.to_onehot_y = to_onehot_y
        self.gamma = gamma
        self.alpha = alpha
        self.weight = weight
        self.use_softmax = use_softmax
        weight = torch.as_tensor(weight) if weight is not None else None
        self.register_buffer("class_weight", weight)
        self.class_weight: None | torch.Tensor

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        n_pred_ch = input.shape[1]

        if self.to_onehot_y:
            if n_pred_ch == 1:
                _warn("single channel prediction, `to_onehot_y=True` ignored.")
            else:
                target = one_hot(target, num_classes=n_pred_ch)

        if not self.include_background:
            if n_pred_ch == 1:
                _warn("single channel prediction, `include_background=False` ignored.")
            else:
                # if skipping background, removing first channel
                target = target[:, 1:]
                input = input[:, 1:]

        if target.shape != input.shape:
            raise ValueError(f"ground truth has different shape ({target.shape}) from input ({input.shape})")

        loss: torch.Tensor | None = None
        input = input.float()
        target = target.float()
        if self.use_softmax:
            if not self.include_background and self.alpha is not None:
                self.alpha = None
                warnings.warn("`include_background=False`, `alpha` ignored when using softmax.")
            loss = softmax_focal_loss(input, target, self.gamma, self.alpha)
        else:
            loss = sigmoid_focal_loss(input, target, self.gamma, self.alpha)

        num_of_classes = target.shape[1]
        if self.class_weight is not None and num_of_classes != 1:
            # make sure the lengths of weights are equal to the number of classes
            if self.class_weight.ndim == 0:
                self.class_weight = torch.as_tensor([self.class_weight] * num_of_classes)
            else:
                if self.class_weight.shape[0] != num_of_classes:
                    raise ValueError(
                        """the length of the `weight` sequence should be the same as the number of classes.
                        If `include_background=False`, the weight should not include
                        the background category class 0."""
                    )
            _check(self.class_weight.min() < 0, "the value/values of the `weight` should be no less than 0.")
            # apply class_weight to loss
            self.class_weight = self.class_weight.to(loss)
            broadcast_dims = [-1] + [1] * len(target.shape[2:])
            self.class_weight = self.class_weight.view(broadcast_dims)
            loss = self.class_weight * loss

        if self.reduction == LossReduction.SUM.value:
            average_spatial_dims = True
            if average_spatial_dims:
                loss = loss.mean(dim=list(range(2, len(target.shape))))
            loss = loss.sum()
        elif self.reduction == LossReduction.MEAN.value:
            loss = loss.mean()
        elif self.reduction == LossReduction.NONE.value:
            pass
        else:
            raise ValueError(f'Unsupported reduction: {self.reduction}, available options are ["mean", "sum", "none"].')
        return loss


def softmax_focal_loss(
    input: torch.Tensor, target: torch.Tensor, gamma: float = 2.0, alpha: float | None = None
) -> torch.Tensor:
    input_ls = input.log_softmax(1)
    loss: torch.Tensor = -(1 - input_ls.exp()).pow(gamma) * input_ls * target

    if alpha is not None:
        # (1-alpha) for the background class and alpha for the other classes
        alpha_fac = torch.tensor([1 - alpha] + [alpha] * (target.shape[1] - 1)).to(loss)
        broadcast_dims = [-1] + [1] * len(target.shape[2:])
        alpha_fac = alpha_fac.view(broadcast_dims)
        loss = alpha_fac * loss

    return loss


def sigmoid_focal_loss(
    input: torch.Tensor, target: torch.Tensor, gamma: float = 2.0, alpha: float | None = None
) -> torch.Tensor:
    loss: torch.Tensor = input - input * target - F.logsigmoid(input)
    invprobs = F.logsigmoid(-input * (target * 2 - 1))  # reduced chance of overflow
    loss = (invprobs * gamma).exp() * loss

    if alpha is not None:
        # alpha if t==1; (1-alpha) if t==0
        alpha_factor = target * alpha + (1 - target) * (1 - alpha)
        loss = alpha_factor * loss

    return loss


def make():
    torch.manual_seed(0)
    return FocalLoss(to_onehot_y=True, gamma=2.0, alpha=0.25, weight=[0.5, 1.0, 2.0])


def _labels(b, h, w, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 3, (b, 1, h, w), generator=g)


def inputs():
    return [
        (torch.randn(2, 3, 4, 4), _labels(2, 4, 4, 1)),
        (torch.randn(1, 3, 5, 3), _labels(1, 5, 3, 2)),
        (torch.randn(2, 3, 6), _labels(2, 6, 1, 3)[..., 0]),
        (torch.randn(2, 1, 4, 4), (torch.rand(2, 1, 4, 4) > 0.5).float()),   # single channel: warns, no weight
        (torch.randn(3, 3, 2, 2) * 4, _labels(3, 2, 2, 4)),
        (torch.randn(1, 3, 3, 3, 2), _labels(1, 3, 3, 5).unsqueeze(-1).expand(1, 1, 3, 3, 2).contiguous()),
        (torch.randn(2, 1, 3), (torch.rand(2, 1, 3) > 0.5).float()),
        (torch.zeros(2, 3, 2, 2), _labels(2, 2, 2, 6)),
    ]


def failing_inputs():
    return [
        (torch.randn(2, 4, 3, 3), _labels(2, 3, 3, 7)),   # 4 classes vs 3 weights
        (torch.randn(2, 3, 3, 3), _labels(2, 3, 4, 8)),   # shape mismatch
    ]
