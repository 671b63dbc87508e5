"""MONAI's `compute_dice`: per batch item and per channel, `DiceHelper.compute_channel` branches on
the ground-truth volume `y_o = torch.sum(y)` (`if y_o > 0`, then `if denorm <= 0` when empty ground
truth is not ignored) and takes the intersection with `torch.masked_select`; `do_metric_reduction`
(reduction "none" here, as `compute_dice` asks) returns the per-(batch, class) scores.

Source: https://github.com/Project-MONAI/MONAI/blob/1.3.0/monai/metrics/meandice.py (`compute_dice`,
`DiceHelper.compute_channel`, `DiceHelper.__call__`) and
https://github.com/Project-MONAI/MONAI/blob/1.3.0/monai/metrics/utils.py (`do_metric_reduction`).
`MetricReduction` / `look_up_option` reduced to a plain `Enum` lookup. Tiny shapes: batch 1-3,
2-4 classes, 3x3 to 5x5 images; `y_pred` one-hot, `y` class indices or one-hot.

Breaks: `if y_o > 0:` and `if denorm <= 0:` (data-dependent branches on 0-d tensors) and
`torch.masked_select(y, y_pred)` (data-dependent output shape), once per (batch, channel).

HAND: `compute_channel` computes every outcome and selects with `torch.where` (the intersection is
`torch.sum(y * y_pred)`, the same count as the masked-select sum; the NaN / 1.0 / 0.0 constants keep
float32), so the per-(batch, channel) loop traces straight through.
"""
from enum import Enum

import torch

KIND = "branch-masked_select"


class MetricReduction(str, Enum):
    NONE = "none"
    MEAN = "mean"
    SUM = "sum"
    MEAN_BATCH = "mean_batch"
    SUM_BATCH = "sum_batch"
    MEAN_CHANNEL = "mean_channel"
    SUM_CHANNEL = "sum_channel"


def look_up_option(opt_str, supported):
    return supported(opt_str)


def do_metric_reduction(f, reduction=MetricReduction.MEAN):
    # some elements might be Nan (if ground truth y was missing (zeros))
    # we need to account for it
    nans = torch.isnan(f)
    not_nans = (~nans).float()

    t_zero = torch.zeros(1, device=f.device, dtype=f.dtype)
    reduction = look_up_option(reduction, MetricReduction)
    if reduction == MetricReduction.NONE:
        return f, not_nans

    f[nans] = 0
    if reduction == MetricReduction.MEAN:
        # 2 steps, first, mean by channel (accounting for nans), then by batch
        not_nans = not_nans.sum(dim=1)
        f = torch.where(not_nans > 0, f.sum(dim=1) / not_nans, t_zero)  # channel average

        not_nans = (not_nans > 0).float().sum(dim=0)
        f = torch.where(not_nans > 0, f.sum(dim=0) / not_nans, t_zero)  # batch average
    elif reduction == MetricReduction.MEAN_BATCH:
        not_nans = not_nans.sum(dim=0)
        f = torch.where(not_nans > 0, f.sum(dim=0) / not_nans, t_zero)  # batch average
    return f, not_nans


class DiceHelper:
    def __init__(
        self,
        include_background=None,
        sigmoid=False,
        softmax=None,
        activate=False,
        get_not_nans=True,
        reduction=MetricReduction.MEAN_BATCH,
        ignore_empty=True,
        num_classes=None,
    ):
        self.sigmoid = sigmoid
        self.reduction = reduction
        self.get_not_nans = get_not_nans
        self.include_background = sigmoid if include_background is None else include_background
        self.softmax = not sigmoid if softmax is None else softmax
        self.activate = activate
        self.ignore_empty = ignore_empty
        self.num_classes = num_classes

    def compute_channel(self, y_pred, y):
        """"""
        y_o = torch.sum(y)
        if y_o > 0:
            return (2.0 * torch.sum(torch.masked_select(y, y_pred))) / (y_o + torch.sum(y_pred))
        if self.ignore_empty:
            return torch.tensor(float("nan"), device=y_o.device)
        denorm = y_o + torch.sum(y_pred)
        if denorm <= 0:
            return torch.tensor(1.0, device=y_o.device)
        return torch.tensor(0.0, device=y_o.device)

    def __call__(self, y_pred, y):
        _softmax, _sigmoid = self.softmax, self.sigmoid
        if self.num_classes is None:
            n_pred_ch = y_pred.shape[1]  # y_pred is in one-hot format or multi-channel scores
        else:
            n_pred_ch = self.num_classes
            if y_pred.shape[1] == 1 and self.num_classes > 1:  # y_pred is single-channel class indices
                _softmax = _sigmoid = False

        if _softmax:
            if n_pred_ch > 1:
                y_pred = torch.argmax(y_pred, dim=1, keepdim=True)

        elif _sigmoid:
            if self.activate:
                y_pred = torch.sigmoid(y_pred)
            y_pred = y_pred > 0.5

        first_ch = 0 if self.include_background else 1
        data = []
        for b in range(y_pred.shape[0]):
            c_list = []
            for c in range(first_ch, n_pred_ch) if n_pred_ch > 1 else [1]:
                x_pred = (y_pred[b, 0] == c) if (y_pred.shape[1] == 1) else y_pred[b, c].bool()
                x = (y[b, 0] == c) if (y.shape[1] == 1) else y[b, c]
                c_list.append(self.compute_channel(x_pred, x))
            data.append(torch.stack(c_list))
        data = torch.stack(data, dim=0).contiguous()  # type: ignore

        f, not_nans = do_metric_reduction(data, self.reduction)  # type: ignore
        return (f, not_nans) if self.get_not_nans else f


def compute_dice(y_pred, y, include_background=True, ignore_empty=True, num_classes=None):
    return DiceHelper(  # type: ignore
        include_background=include_background,
        reduction=MetricReduction.NONE,
        get_not_nans=False,
        softmax=False,
        ignore_empty=ignore_empty,
        num_classes=num_classes,
    )(y_pred=y_pred, y=y)


def make():
    return compute_dice


def _onehot(labels, n):
    return torch.nn.functional.one_hot(labels[:, 0], n).permute(0, 3, 1, 2).float()


def _case(g, b, n, hw, include_background, ignore_empty, absent_gt=(), absent_pred=(), onehot_y=False):
    y = torch.randint(0, n, (b, 1, hw, hw), generator=g)
    p = torch.randint(0, n, (b, 1, hw, hw), generator=g)
    for cls in absent_gt:  # class missing from the ground truth
        y[y == cls] = 0 if cls != 0 else 1
    for cls in absent_pred:  # class missing from the prediction
        p[p == cls] = 0 if cls != 0 else 1
    y_in = _onehot(y, n) if onehot_y else y
    return (_onehot(p, n), y_in, include_background, ignore_empty)


def inputs():
    g = torch.Generator().manual_seed(3)
    return [
        _case(g, 2, 3, 4, True, True),
        _case(g, 2, 3, 4, True, True, absent_gt=(2,)),                       # empty gt -> nan
        _case(g, 2, 3, 4, False, False, absent_gt=(2,)),                     # empty gt, pred not -> 0.0
        _case(g, 1, 3, 5, True, False, absent_gt=(2,), absent_pred=(2,)),    # both empty -> 1.0
        _case(g, 3, 4, 3, False, True, absent_gt=(1, 3)),
        _case(g, 2, 2, 4, True, False, absent_gt=(1,), onehot_y=True),       # one-hot ground truth
        _case(g, 2, 4, 4, True, True, onehot_y=True),
        _case(g, 3, 3, 3, False, False, absent_gt=(1,), absent_pred=(1,)),
    ]
