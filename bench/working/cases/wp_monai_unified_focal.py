"""MONAI AsymmetricUnifiedFocalLoss.forward (with AsymmetricFocalLoss and AsymmetricFocalTverskyLoss).

Source: https://github.com/Project-MONAI/MONAI/blob/1.3.0/monai/losses/unified_focal_loss.py
(the binary-only version shipped in MONAI 0.9-1.4; `one_hot` from monai/networks/utils.py,
LossReduction reduced to strings).

Breaks: `if torch.max(y_true) != self.num_classes - 1: raise ValueError(...)` -- a value check on a
tensor (data-dependent branch).

HAND: the check is done by a `torch.library.custom_op` with an ORDERED effect that receives the
0-d `torch.max(y_true)` and raises the same ValueError with the same message; every other branch
is on shapes/attributes and stays.
"""
import warnings
from typing import Union

import torch
from torch.nn.modules.loss import _Loss

KIND = "value check raise"
GRAD = True


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


class AsymmetricFocalTverskyLoss(_Loss):
    def __init__(self, to_onehot_y: bool = False, delta: float = 0.7, gamma: float = 0.75, epsilon: float = 1e-7,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.to_onehot_y = to_onehot_y
        self.delta = delta
        self.gamma = gamma
        self.epsilon = epsilon

    def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:
        n_pred_ch = y_pred.shape[1]

        if self.to_onehot_y:
            if n_pred_ch == 1:
                warnings.warn("single channel prediction, `to_onehot_y=True` ignored.")
            else:
                y_true = one_hot(y_true, num_classes=n_pred_ch)

        if y_true.shape != y_pred.shape:
            raise ValueError(f"ground truth has different shape ({y_true.shape}) from input ({y_pred.shape})")

        # clip the prediction to avoid NaN
        y_pred = torch.clamp(y_pred, self.epsilon, 1.0 - self.epsilon)
        axis = list(range(2, len(y_pred.shape)))

        # Calculate true positives (tp), false negatives (fn) and false positives (fp)
        tp = torch.sum(y_true * y_pred, dim=axis)
        fn = torch.sum(y_true * (1 - y_pred), dim=axis)
        fp = torch.sum((1 - y_true) * y_pred, dim=axis)
        dice_class = (tp + self.epsilon) / (tp + self.delta * fn + (1 - self.delta) * fp + self.epsilon)

        # Calculate losses separately for each class, enhancing both classes
        back_dice = 1 - dice_class[:, 0]
        fore_dice = (1 - dice_class[:, 1]) * torch.pow(1 - dice_class[:, 1], -self.gamma)

        # Average class scores
        loss = torch.mean(torch.stack([back_dice, fore_dice], dim=-1))
        return loss


class AsymmetricFocalLoss(_Loss):
    def __init__(self, to_onehot_y: bool = False, delta: float = 0.7, gamma: float = 2, epsilon: float = 1e-7,
                 reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.to_onehot_y = to_onehot_y
        self.delta = delta
        self.gamma = gamma
        self.epsilon = epsilon

    def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:
        n_pred_ch = y_pred.shape[1]

        if self.to_onehot_y:
            if n_pred_ch == 1:
                warnings.warn("single channel prediction, `to_onehot_y=True` ignored.")
            else:
                y_true = one_hot(y_true, num_classes=n_pred_ch)

        if y_true.shape != y_pred.shape:
            raise ValueError(f"ground truth has different shape ({y_true.shape}) from input ({y_pred.shape})")

        y_pred = torch.clamp(y_pred, self.epsilon, 1.0 - self.epsilon)
        cross_entropy = -y_true * torch.log(y_pred)

        back_ce = torch.pow(1 - y_pred[:, 0], self.gamma) * cross_entropy[:, 0]
        back_ce = (1 - self.delta) * back_ce

        fore_ce = cross_entropy[:, 1]
        fore_ce = self.delta * fore_ce

        loss = torch.mean(torch.sum(torch.stack([back_ce, fore_ce], dim=1), dim=1))
        return loss


class AsymmetricUnifiedFocalLoss(_Loss):
    def __init__(self, to_onehot_y: bool = False, num_classes: int = 1, weight: float = 0.5, gamma: float = 0.5,
                 delta: float = 0.7, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.to_onehot_y = to_onehot_y
        self.num_classes = num_classes + 1
        self.gamma = gamma
        self.delta = delta
        self.weight: float = weight
        self.asy_focal_loss = AsymmetricFocalLoss(gamma=self.gamma, delta=self.delta)
        self.asy_focal_tversky_loss = AsymmetricFocalTverskyLoss(gamma=self.gamma, delta=self.delta)

    def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:
        if y_pred.shape != y_true.shape:
            raise ValueError(f"ground truth has different shape ({y_true.shape}) from input ({y_pred.shape})")

        if len(y_pred.shape) != 4 and len(y_pred.shape) != 5:
            raise ValueError(f"input shape must be 4 or 5, but got {y_pred.shape}")

        if y_pred.shape[1] == 1:
            y_pred = one_hot(y_pred, num_classes=self.num_classes)
            y_true = one_hot(y_true, num_classes=self.num_classes)

        if torch.max(y_true) != self.num_classes - 1:
            raise ValueError(f"Pelase make sure the number of classes is {self.num_classes-1}")

        n_pred_ch = y_pred.shape[1]
        if self.to_onehot_y:
            if n_pred_ch == 1:
                warnings.warn("single channel prediction, `to_onehot_y=True` ignored.")
            else:
                y_true = one_hot(y_true, num_classes=n_pred_ch)

        asy_focal_loss = self.asy_focal_loss(y_pred, y_true)
        asy_focal_tversky_loss = self.asy_focal_tversky_loss(y_pred, y_true)

        loss: torch.Tensor = self.weight * asy_focal_loss + (1 - self.weight) * asy_focal_tversky_loss

        if self.reduction == "sum":
            return torch.sum(loss)  # sum over the batch and channel dims
        if self.reduction == "none":
            return loss  # returns [N, num_classes] losses
        if self.reduction == "mean":
            return torch.mean(loss)
        raise ValueError(f'Unsupported reduction: {self.reduction}, available options are ["mean", "sum", "none"].')


def make():
    torch.manual_seed(0)
    return AsymmetricUnifiedFocalLoss()


def _two_channel(shape, seed):
    g = torch.Generator().manual_seed(seed)
    probs = torch.softmax(torch.randn(shape[0], 2, *shape[1:], generator=g), dim=1)
    labels = torch.randint(0, 2, (shape[0], 1, *shape[1:]), generator=g)
    return probs, one_hot(labels, 2)


def inputs():
    g = torch.Generator().manual_seed(11)
    single_pred = torch.randint(0, 2, (2, 1, 4, 4), generator=g).float()
    single_true = torch.randint(0, 2, (2, 1, 4, 4), generator=g).float()
    return [
        _two_channel((2, 4, 4), 1),
        _two_channel((1, 3, 5), 2),
        _two_channel((2, 3, 3, 2), 3),          # 5-d input
        _two_channel((3, 2, 2), 4),
        (single_pred, single_true),             # single-channel -> one_hot of both
        (torch.zeros(1, 1, 3, 3), torch.zeros(1, 1, 3, 3)),   # one_hot of all-zero labels has max 1
        _two_channel((1, 6, 6), 5),
        _two_channel((4, 2, 3), 6),
    ]


def failing_inputs():
    return [
        (torch.rand(1, 2, 3, 3), torch.zeros(1, 2, 3, 3)),           # max(y_true) == 0 -> ValueError
        (torch.rand(1, 2, 3, 3), torch.full((1, 2, 3, 3), 2.0)),     # max(y_true) == 2 -> ValueError
        (torch.rand(2, 2, 3), torch.rand(2, 2, 3)),                   # 3-d input
    ]
