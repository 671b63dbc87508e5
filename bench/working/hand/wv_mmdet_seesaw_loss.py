"""MMDetection SeesawLoss (long-tailed classification loss of a RoI head, LVIS configs).

Source: https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/models/losses/seesaw_loss.py
(seesaw_ce_loss, SeesawLoss.forward / _split_cls_score, kept as in the source; the class index
tensor is built with `.to(scores.device)` as in the 2.x releases after the `.cuda()` fix),
https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/models/losses/cross_entropy_loss.py
(cross_entropy) and
https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/models/losses/utils.py
(reduce_loss, weight_reduce_loss). 4 classes instead of 1203, 10 RoIs.

Breaks: forward accumulates the per-class sample counts with
`unique_labels = labels.unique(); for u_l in unique_labels: inds_ = labels == u_l.item(); ...`
(torch.unique has a data-dependent output size; `.item()` needs the Python value), and the classes
loss only sees the positive RoIs through boolean-mask indexing (`cls_score_classes[pos_inds]`,
`labels[pos_inds]`, `label_weights[pos_inds]`): data-dependent output shapes.

HAND: the count loop becomes `cum_samples.index_add_(0, labels, ones)` (same per-class counts
added to the float buffer); the positive-only classes loss is computed on all RoIs with negatives'
labels replaced by 0 and weights by 0, reduced with reduction='none', and the mean is a masked sum
divided by the number of positives (NaN with no positive, as the mean of an empty tensor is; the
NaN is selected with torch.where so no NaN gradient leaks into the objectness gradients). Written
for reduction 'mean'/'sum' (reduction_override='none' returns a data-dependent-length vector and is
not rewritten).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "unique() loop + .item() + bool-mask gather"
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


def cross_entropy(pred,
                  label,
                  weight=None,
                  reduction='mean',
                  avg_factor=None,
                  class_weight=None,
                  ignore_index=-100,
                  avg_non_ignore=False):
    # The default value of ignore_index is the same as F.cross_entropy
    ignore_index = -100 if ignore_index is None else ignore_index
    # element-wise losses
    loss = F.cross_entropy(
        pred,
        label,
        weight=class_weight,
        reduction='none',
        ignore_index=ignore_index)

    # average loss over non-ignored elements
    if (avg_factor is None) and avg_non_ignore and reduction == 'mean':
        avg_factor = label.numel() - (label == ignore_index).sum().item()

    # apply weights and do the reduction
    if weight is not None:
        weight = weight.float()
    loss = weight_reduce_loss(
        loss, weight=weight, reduction=reduction, avg_factor=avg_factor)

    return loss


def seesaw_ce_loss(cls_score,
                   labels,
                   label_weights,
                   cum_samples,
                   num_classes,
                   p,
                   q,
                   eps,
                   reduction='mean',
                   avg_factor=None):
    assert cls_score.size(-1) == num_classes
    assert len(cum_samples) == num_classes

    onehot_labels = F.one_hot(labels, num_classes)
    seesaw_weights = cls_score.new_ones(onehot_labels.size())

    # mitigation factor
    if p > 0:
        sample_ratio_matrix = cum_samples[None, :].clamp(
            min=1) / cum_samples[:, None].clamp(min=1)
        index = (sample_ratio_matrix < 1.0).float()
        sample_weights = sample_ratio_matrix.pow(p) * index + (1 - index)
        mitigation_factor = sample_weights[labels.long(), :]
        seesaw_weights = seesaw_weights * mitigation_factor

    # compensation factor
    if q > 0:
        scores = F.softmax(cls_score.detach(), dim=1)
        self_scores = scores[
            torch.arange(0, len(scores)).to(scores.device).long(),
            labels.long()]
        score_matrix = scores / self_scores[:, None].clamp(min=eps)
        index = (score_matrix > 1.0).float()
        compensation_factor = score_matrix.pow(q) * index + (1 - index)
        seesaw_weights = seesaw_weights * compensation_factor

    cls_score = cls_score + (seesaw_weights.log() * (1 - onehot_labels))

    loss = F.cross_entropy(cls_score, labels, weight=None, reduction='none')

    if label_weights is not None:
        label_weights = label_weights.float()
    loss = weight_reduce_loss(
        loss, weight=label_weights, reduction=reduction, avg_factor=avg_factor)
    return loss


class SeesawLoss(nn.Module):
    def __init__(self,
                 use_sigmoid=False,
                 p=0.8,
                 q=2.0,
                 num_classes=1203,
                 eps=1e-2,
                 reduction='mean',
                 loss_weight=1.0,
                 return_dict=True):
        super(SeesawLoss, self).__init__()
        assert not use_sigmoid
        self.use_sigmoid = False
        self.p = p
        self.q = q
        self.num_classes = num_classes
        self.eps = eps
        self.reduction = reduction
        self.loss_weight = loss_weight
        self.return_dict = return_dict

        # 0 for pos, 1 for neg
        self.cls_criterion = seesaw_ce_loss

        # cumulative samples for each category
        self.register_buffer(
            'cum_samples',
            torch.zeros(self.num_classes + 1, dtype=torch.float))

        # custom output channels of the classifier
        self.custom_cls_channels = True
        # custom accuracy of the classsifier
        self.custom_acc = True

    def _split_cls_score(self, cls_score):
        # split cls_score to cls_score_classes and cls_score_objectness
        assert cls_score.size(-1) == self.num_classes + 2
        cls_score_classes = cls_score[..., :-2]
        cls_score_objectness = cls_score[..., -2:]
        return cls_score_classes, cls_score_objectness

    def forward(self,
                cls_score,
                labels,
                label_weights,
                avg_factor=None,
                reduction_override=None):
        assert reduction_override in (None, 'none', 'mean', 'sum')
        reduction = (
            reduction_override if reduction_override else self.reduction)
        assert cls_score.size(-1) == self.num_classes + 2
        pos_inds = labels < self.num_classes
        # 0 for pos, 1 for neg
        obj_labels = (labels == self.num_classes).long()

        # accumulate the samples for each category
        self.cum_samples.index_add_(
            0, labels, torch.ones_like(labels, dtype=self.cum_samples.dtype))

        if label_weights is not None:
            label_weights = label_weights.float()

        cls_score_classes, cls_score_objectness = self._split_cls_score(
            cls_score)
        # calculate loss_cls_classes (only pos samples count): every RoI goes
        # through the loss, negatives with label 0 and weight 0
        pos_labels = torch.where(pos_inds, labels, 0)
        pos_weights = torch.where(pos_inds, label_weights, 0.0)
        loss_vec = self.cls_criterion(
            cls_score_classes, pos_labels,
            pos_weights, self.cum_samples[:self.num_classes],
            self.num_classes, self.p, self.q, self.eps, 'none', None)
        if reduction == 'sum':
            loss_classes = loss_vec.sum()
        elif avg_factor is not None:
            eps = torch.finfo(torch.float32).eps
            loss_classes = loss_vec.sum() / (avg_factor + eps)
        else:
            num_pos = pos_inds.sum()
            loss_classes = torch.where(
                num_pos > 0, loss_vec.sum() / num_pos.clamp(min=1),
                torch.full_like(loss_vec.sum(), float('nan')))
        loss_cls_classes = self.loss_weight * loss_classes
        # calculate loss_cls_objectness
        loss_cls_objectness = self.loss_weight * cross_entropy(
            cls_score_objectness, obj_labels, label_weights, reduction,
            avg_factor)

        if self.return_dict:
            loss_cls = dict()
            loss_cls['loss_cls_objectness'] = loss_cls_objectness
            loss_cls['loss_cls_classes'] = loss_cls_classes
        else:
            loss_cls = loss_cls_classes + loss_cls_objectness
        return loss_cls


def make():
    torch.manual_seed(0)
    return SeesawLoss(p=0.8, q=2.0, num_classes=4, eps=1e-2, reduction='mean', loss_weight=1.0)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    specs = [
        (10, None, None, [0, 0, 0, 1, 2, 4, 4, 4, 3, 0]),
        (10, None, None, None),
        (8, 6.0, None, None),
        (10, None, 'sum', None),
        (10, None, 'mean', [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        (6, None, None, [4, 4, 4, 4, 4, 4]),  # no positive RoI: classes loss is NaN
        (12, 9.0, 'mean', None),
        (10, None, None, [2, 2, 3, 3, 3, 3, 3, 3, 4, 0]),
        (9, None, 'sum', None),
    ]
    for n, avg, red, lab in specs:
        cls_score = 2.0 * torch.randn(n, 6, generator=g)
        if lab is None:
            labels = torch.randint(0, 5, (n,), generator=g)
        else:
            labels = torch.tensor(lab)
        w = torch.ones(n)
        w[torch.rand(n, generator=g) < 0.2] = 0.5
        out.append((cls_score, labels, w, avg, red))
    return out
