"""MMDetection Quality Focal Loss (GFL head classification loss), QualityFocalLoss.forward with the
weighted_loss / weight_reduce_loss reduction path.

Source: https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/models/losses/gfocal_loss.py
        https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/models/losses/utils.py
Breaks: `pos = ((label >= 0) & (label < bg_class_ind)).nonzero().squeeze(1)` -- nonzero has a
        data-dependent output shape; the positives are then gathered (`pred[pos, pos_label]`) and
        written back with an index_put (`loss[pos, pos_label] = ...`).
HAND: dense rewrite: the positive-sample BCE is evaluated at every (row, class) and selected with
      torch.where on a one-hot mask of the (in-range) labels, so every element keeps the same formula
      and the overwritten entries get the same (zero) gradient as after the index_put.
"""
import functools

import torch
import torch.nn.functional as F
from torch import nn

KIND = "nonzero + index_put (loss)"
GRAD = True


def reduce_loss(loss, reduction):
    reduction_enum = F._Reduction.get_enum(reduction)
    # none: 0, elementwise_mean:1, sum: 2
    if reduction_enum == 0:
        return loss
    elif reduction_enum == 1:
        return loss.mean()
    elif reduction_enum == 2:
        return loss.sum()


def weight_reduce_loss(loss, weight=None, reduction='mean', avg_factor=None):
    # if weight is specified, apply element-wise weight
    if weight is not None:
        loss = loss * weight

    # if avg_factor is not specified, just reduce the loss
    if avg_factor is None:
        loss = reduce_loss(loss, reduction)
    else:
        # if reduction is mean, then average the loss by avg_factor
        if reduction == 'mean':
            # Avoid causing ZeroDivisionError when avg_factor is 0.0,
            # i.e., all labels of an image belong to ignore index.
            eps = torch.finfo(torch.float32).eps
            loss = loss.sum() / (avg_factor + eps)
        # if reduction is 'none', then do nothing, otherwise raise an error
        elif reduction != 'none':
            raise ValueError('avg_factor can not be used with reduction="sum"')
    return loss


def weighted_loss(loss_func):
    @functools.wraps(loss_func)
    def wrapper(pred, target, weight=None, reduction='mean', avg_factor=None, **kwargs):
        # get element-wise loss
        loss = loss_func(pred, target, **kwargs)
        loss = weight_reduce_loss(loss, weight, reduction, avg_factor)
        return loss

    return wrapper


@weighted_loss
def quality_focal_loss(pred, target, beta=2.0):
    assert len(target) == 2, """target for QFL must be a tuple of two elements,
        including category label and quality label, respectively"""
    # label denotes the category id, score denotes the quality score
    label, score = target

    # negatives are supervised by 0 quality score
    pred_sigmoid = pred.sigmoid()
    scale_factor = pred_sigmoid
    zerolabel = scale_factor.new_zeros(pred.shape)
    loss = F.binary_cross_entropy_with_logits(
        pred, zerolabel, reduction='none') * scale_factor.pow(beta)

    # FG cat_id: [0, num_classes -1], BG cat_id: num_classes
    bg_class_ind = pred.size(1)
    pos = ((label >= 0) & (label < bg_class_ind)).nonzero().squeeze(1)
    pos_label = label[pos].long()
    # positives are supervised by bbox quality (IoU) score
    scale_factor = score[pos] - pred_sigmoid[pos, pos_label]
    loss[pos, pos_label] = F.binary_cross_entropy_with_logits(
        pred[pos, pos_label], score[pos],
        reduction='none') * scale_factor.abs().pow(beta)

    loss = loss.sum(dim=1, keepdim=False)
    return loss


class QualityFocalLoss(nn.Module):
    def __init__(self, use_sigmoid=True, beta=2.0, reduction='mean', loss_weight=1.0):
        super(QualityFocalLoss, self).__init__()
        assert use_sigmoid is True, 'Only sigmoid in QFL supported now.'
        self.use_sigmoid = use_sigmoid
        self.beta = beta
        self.reduction = reduction
        self.loss_weight = loss_weight

    def forward(self, pred, target, weight=None, avg_factor=None, reduction_override=None):
        assert reduction_override in (None, 'none', 'mean', 'sum')
        reduction = (
            reduction_override if reduction_override else self.reduction)
        if self.use_sigmoid:
            loss_cls = self.loss_weight * quality_focal_loss(
                pred,
                target,
                weight,
                beta=self.beta,
                reduction=reduction,
                avg_factor=avg_factor)
        else:
            raise NotImplementedError
        return loss_cls


def make():
    torch.manual_seed(0)
    return QualityFocalLoss()


def inputs():
    g = torch.Generator().manual_seed(0)
    C = 4
    out = []
    specs = [(6, 'mixed', None, None, None), (5, 'all_bg', None, None, None), (4, 'all_fg', None, None, None),
             (6, 'mixed', True, 3.0, None), (7, 'mixed', None, 2.0, 'none'), (5, 'mixed', True, None, 'sum'),
             (3, 'all_bg', True, 1.0, None), (8, 'mixed', None, None, 'none')]
    for n, kind, w, avg, red in specs:
        pred = torch.randn(n, C, generator=g)
        if kind == 'all_bg':
            label = torch.full((n,), C, dtype=torch.long)
        elif kind == 'all_fg':
            label = torch.randint(0, C, (n,), generator=g)
        else:
            label = torch.randint(0, C + 1, (n,), generator=g)
        score = torch.rand(n, generator=g)
        weight = torch.rand(n, generator=g) if w else None
        out.append((pred, (label, score), weight, avg, red))
    return out
