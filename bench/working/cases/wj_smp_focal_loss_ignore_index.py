"""segmentation_models.pytorch's `FocalLoss` in multiclass mode with an `ignore_index` (void pixels,
255 in VOC/Cityscapes-style masks): the multiclass loss is a sum of per-class binary focal losses,
and for every class the pixels whose label is `ignore_index` are dropped with boolean-mask indexing
(`cls_y_true[not_ignored]`, `cls_y_pred[not_ignored]`) before `focal_loss_with_logits` takes the
mean over the kept pixels.

Source: https://github.com/qubvel-org/segmentation_models.pytorch/blob/744e3724b1679e1e7dacc422baa8253c2fcdb8bf/segmentation_models_pytorch/losses/focal.py
(`FocalLoss`) and
https://github.com/qubvel-org/segmentation_models.pytorch/blob/14c60e202bad4b0f5a14927950a1cab72f3af42e/segmentation_models_pytorch/losses/_functional.py
(`focal_loss_with_logits`). Used as `smp.losses.FocalLoss("multiclass", ignore_index=255)`; here
with `alpha=0.25` as well. Tiny shapes: batch 1-2, 3-4 classes, 4x4 to 6x6 masks.

Breaks: `cls_y_true = cls_y_true[not_ignored]` (boolean-mask indexing: a data-dependent output
shape), in the loop over classes; dynamo gives up on the frame there ("frame skipped"), so the
same indexing of `cls_y_pred` on the next line runs eagerly and is not reported.

HAND: every class's focal term is computed on all pixels (`reduction="none"`, the ignored pixels'
labels are a harmless 0 since `y_true == cls` is False there) and the mean over the kept pixels is
`(loss * mask).sum() / count`, with the count clamped to 1 in the division and a NaN added when it
is 0 (the mean of an empty selection is NaN, and the gradient then stays 0, as when nothing is
selected).
"""
from functools import partial
from typing import Optional

import torch
import torch.nn.functional as F
from torch.nn.modules.loss import _Loss

KIND = "dynamic-shape-loop"
GRAD = True

BINARY_MODE: str = "binary"
MULTICLASS_MODE: str = "multiclass"
MULTILABEL_MODE: str = "multilabel"


def focal_loss_with_logits(
    output: torch.Tensor,
    target: torch.Tensor,
    gamma: float = 2.0,
    alpha: Optional[float] = 0.25,
    reduction: str = "mean",
    normalized: bool = False,
    reduced_threshold: Optional[float] = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Compute binary focal loss between target and output logits."""
    target = target.type(output.type())

    logpt = F.binary_cross_entropy_with_logits(output, target, reduction="none")
    pt = torch.exp(-logpt)

    # compute the loss
    if reduced_threshold is None:
        focal_term = (1.0 - pt).pow(gamma)
    else:
        focal_term = ((1.0 - pt) / reduced_threshold).pow(gamma)
        focal_term[pt < reduced_threshold] = 1

    loss = focal_term * logpt

    if alpha is not None:
        loss *= alpha * target + (1 - alpha) * (1 - target)

    if normalized:
        norm_factor = focal_term.sum().clamp_min(eps)
        loss /= norm_factor

    if reduction == "mean":
        loss = loss.mean()
    if reduction == "sum":
        loss = loss.sum()
    if reduction == "batchwise_mean":
        loss = loss.sum(0)

    return loss


class FocalLoss(_Loss):
    def __init__(
        self,
        mode: str,
        alpha: Optional[float] = None,
        gamma: Optional[float] = 2.0,
        ignore_index: Optional[int] = None,
        reduction: Optional[str] = "mean",
        normalized: bool = False,
        reduced_threshold: Optional[float] = None,
    ):
        """Compute Focal loss

        Args:
            mode: Loss mode 'binary', 'multiclass' or 'multilabel'
            alpha: Prior probability of having positive value in target.
            gamma: Power factor for dampening weight (focal strength).
            ignore_index: If not None, targets may contain values to be ignored.
                Target values equal to ignore_index will be ignored from loss computation.
            normalized: Compute normalized focal loss (https://arxiv.org/pdf/1909.07829.pdf).
            reduced_threshold: Switch to reduced focal loss. Note, when using this mode you
                should use `reduction="sum"`.

        Shape
             - **y_pred** - torch.Tensor of shape (N, C, H, W)
             - **y_true** - torch.Tensor of shape (N, H, W) or (N, C, H, W)
        """
        assert mode in {BINARY_MODE, MULTILABEL_MODE, MULTICLASS_MODE}
        super().__init__()

        self.mode = mode
        self.ignore_index = ignore_index
        self.focal_loss_fn = partial(
            focal_loss_with_logits,
            alpha=alpha,
            gamma=gamma,
            reduced_threshold=reduced_threshold,
            reduction=reduction,
            normalized=normalized,
        )

    def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:

        if self.mode in {BINARY_MODE, MULTILABEL_MODE}:
            y_true = y_true.view(-1)
            y_pred = y_pred.view(-1)

            if self.ignore_index is not None:
                # Filter predictions with ignore label from loss computation
                not_ignored = y_true != self.ignore_index
                y_pred = y_pred[not_ignored]
                y_true = y_true[not_ignored]

            loss = self.focal_loss_fn(y_pred, y_true)

        elif self.mode == MULTICLASS_MODE:

            num_classes = y_pred.size(1)
            loss = 0

            # Filter anchors with -1 label from loss computation
            if self.ignore_index is not None:
                not_ignored = y_true != self.ignore_index

            for cls in range(num_classes):
                cls_y_true = (y_true == cls).long()
                cls_y_pred = y_pred[:, cls, ...]

                if self.ignore_index is not None:
                    cls_y_true = cls_y_true[not_ignored]
                    cls_y_pred = cls_y_pred[not_ignored]

                loss += self.focal_loss_fn(cls_y_pred, cls_y_true)

        return loss


def make():
    torch.manual_seed(0)
    return FocalLoss(MULTICLASS_MODE, alpha=0.25, ignore_index=255)


def _case(g, b, c, hw, void=0.15, scale=2.0):
    logits = scale * torch.randn(b, c, hw, hw, generator=g)
    mask = torch.randint(0, c, (b, hw, hw), generator=g)
    void_px = torch.rand(b, hw, hw, generator=g) < void
    mask[void_px] = 255
    return logits, mask


def inputs():
    g = torch.Generator().manual_seed(21)
    cases = [
        _case(g, 2, 3, 4),
        _case(g, 1, 4, 6, void=0.0),             # no void pixel
        _case(g, 2, 4, 5, void=0.5),
        _case(g, 1, 3, 4, void=0.9, scale=6.0),  # mostly void, confident logits
        _case(g, 2, 3, 6, void=0.3, scale=0.5),
        _case(g, 1, 4, 4),
    ]
    # an all-void crop: every class's mean is over no pixel (NaN)
    logits, mask = _case(g, 1, 3, 4)
    cases.append((logits, torch.full_like(mask, 255)))
    # a crop with a single labelled pixel
    logits, mask = _case(g, 1, 3, 5)
    mask = torch.full_like(mask, 255)
    mask[0, 2, 3] = 1
    cases.append((logits, mask))
    return cases
