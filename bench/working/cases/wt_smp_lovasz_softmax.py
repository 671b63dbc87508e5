"""segmentation_models.pytorch LovaszLoss, multiclass mode (Lovasz-Softmax, classes="present").

Source: https://github.com/qubvel-org/segmentation_models.pytorch/blob/main/segmentation_models_pytorch/losses/lovasz.py
        (LovaszLoss.forward, _lovasz_softmax, _lovasz_softmax_flat, _flatten_probas, _lovasz_grad, mean;
        originally from https://github.com/bermanmaxim/LovaszSoftmax)

Breaks: `if classes == "present" and fg.sum() == 0: continue` inside the per-class Python loop is a
data-dependent branch (once per class); the number of losses averaged by `mean(losses)` depends on it.

HAND: every class's Lovasz term is computed (an absent class has a finite term), and the "present"
selection becomes a masked mean: sum of terms where fg.sum() > 0 divided by the number of present
classes (torch.where, so absent classes get zero gradient as before).
"""
from typing import Optional

import torch
import torch.nn.functional as F
from torch.nn.modules.loss import _Loss

try:
    from itertools import ifilterfalse
except ImportError:  # py3k
    from itertools import filterfalse as ifilterfalse

KIND = "data-dependent branch in loop"
GRAD = True

BINARY_MODE = "binary"
MULTICLASS_MODE = "multiclass"
MULTILABEL_MODE = "multilabel"


def _lovasz_grad(gt_sorted):
    p = len(gt_sorted)
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.float().cumsum(0)
    union = gts + (1 - gt_sorted).float().cumsum(0)
    jaccard = 1.0 - intersection / union
    if p > 1:  # cover 1-pixel case
        jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]
    return jaccard


def _lovasz_softmax(probas, labels, classes="present", per_image=False, ignore=None):
    if per_image:
        loss = mean(
            _lovasz_softmax_flat(*_flatten_probas(prob.unsqueeze(0), lab.unsqueeze(0), ignore), classes=classes)
            for prob, lab in zip(probas, labels)
        )
    else:
        loss = _lovasz_softmax_flat(*_flatten_probas(probas, labels, ignore), classes=classes)
    return loss


def _lovasz_softmax_flat(probas, labels, classes="present"):
    if probas.numel() == 0:
        # only void pixels, the gradients should be 0
        return probas * 0.0
    C = probas.size(1)
    losses = []
    class_to_sum = list(range(C)) if classes in ["all", "present"] else classes
    for c in class_to_sum:
        fg = (labels == c).type_as(probas)  # foreground for class c
        if classes == "present" and fg.sum() == 0:
            continue
        if C == 1:
            if len(classes) > 1:
                raise ValueError("Sigmoid output possible only with 1 class")
            class_pred = probas[:, 0]
        else:
            class_pred = probas[:, c]
        errors = (fg - class_pred).abs()
        errors_sorted, perm = torch.sort(errors, 0, descending=True)
        perm = perm.data
        fg_sorted = fg[perm]
        losses.append(torch.dot(errors_sorted, _lovasz_grad(fg_sorted)))
    return mean(losses)


def _flatten_probas(probas, labels, ignore=None):
    if probas.dim() == 3:
        # assumes output of a sigmoid layer
        B, H, W = probas.size()
        probas = probas.view(B, 1, H, W)

    C = probas.size(1)
    probas = torch.movedim(probas, 1, -1)  # [B, C, Di, Dj, ...] -> [B, Di, Dj, ..., C]
    probas = probas.contiguous().view(-1, C)  # [P, C]

    labels = labels.view(-1)
    if ignore is None:
        return probas, labels
    valid = labels != ignore
    vprobas = probas[valid]
    vlabels = labels[valid]
    return vprobas, vlabels


def isnan(x):
    return x != x


def mean(values, ignore_nan=False, empty=0):
    values = iter(values)
    if ignore_nan:
        values = ifilterfalse(isnan, values)
    try:
        n = 1
        acc = next(values)
    except StopIteration:
        if empty == "raise":
            raise ValueError("Empty mean")
        return empty
    for n, v in enumerate(values, 2):
        acc += v
    if n == 1:
        return acc
    return acc / n


class LovaszLoss(_Loss):
    def __init__(self, mode: str, per_image: bool = False, ignore_index: Optional[int] = None, from_logits: bool = True):
        assert mode in {BINARY_MODE, MULTILABEL_MODE, MULTICLASS_MODE}
        super().__init__()

        self.mode = mode
        self.ignore_index = ignore_index
        self.per_image = per_image

    def forward(self, y_pred, y_true):
        if self.mode == MULTICLASS_MODE:
            y_pred = y_pred.softmax(dim=1)
            loss = _lovasz_softmax(y_pred, y_true, per_image=self.per_image, ignore=self.ignore_index)
        else:
            raise ValueError("Wrong mode {}.".format(self.mode))
        return loss


def make():
    torch.manual_seed(0)
    return LovaszLoss(mode=MULTICLASS_MODE)


def inputs():
    g = torch.Generator().manual_seed(0)

    def mk(b, c, h, w, high=None):
        return (torch.randn(b, c, h, w, generator=g) * 2, torch.randint(0, high or c, (b, h, w), generator=g))

    return [
        mk(2, 4, 3, 3, high=2),       # classes 2, 3 absent
        mk(2, 3, 4, 4),               # usually all present
        mk(1, 3, 2, 2, high=1),       # a single present class (mean of one term)
        mk(1, 5, 4, 3, high=3),
        (torch.randn(1, 3, 2, 3, generator=g), torch.tensor([[[0, 0, 2], [2, 2, 0]]])),   # class 1 absent
        mk(3, 2, 2, 2),
        mk(2, 4, 5, 5),
        (torch.zeros(1, 3, 2, 2), torch.tensor([[[1, 1], [1, 1]]])),
    ]
