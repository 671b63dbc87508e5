"""Hand rewrite of cases/wl_mmseg_sigmoid_ce_onehot_avg_non_ignore.py: one-hot labels by comparison
with `arange(C)`, the valid-pixel count kept as a tensor, and the binary-label check in a custom op
with an ordered effect."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._library.effects import EffectType

KIND = "nonzero+mask+item"
GRAD = True


_NS = "wl_mmseg_sigmoid_ce"
if not hasattr(getattr(torch.ops, _NS), "check_binary_labels"):

    @torch.library.custom_op(f"{_NS}::check_binary_labels", mutates_args=())
    def _check_binary_labels(label: torch.Tensor, ignore_index: int) -> None:
        assert label[label != ignore_index].max() <= 1, \
            'For pred with shape [N, 1, H, W], its label must have at ' \
            'most 2 classes'

    @_check_binary_labels.register_fake
    def _(label, ignore_index):
        return None

    _check_binary_labels.register_effect(EffectType.ORDERED)


def get_class_weight(class_weight):
    """Get class weight for loss function (file loading left out)."""
    return class_weight


def reduce_loss(loss, reduction) -> torch.Tensor:
    """Reduce loss as specified."""
    reduction_enum = F._Reduction.get_enum(reduction)
    # none: 0, elementwise_mean:1, sum: 2
    if reduction_enum == 0:
        return loss
    elif reduction_enum == 1:
        return loss.mean()
    elif reduction_enum == 2:
        return loss.sum()


def weight_reduce_loss(loss,
                       weight=None,
                       reduction='mean',
                       avg_factor=None) -> torch.Tensor:
    """Apply element-wise weight and reduce loss."""
    # if weight is specified, apply element-wise weight
    if weight is not None:
        assert weight.dim() == loss.dim()
        if weight.dim() > 1:
            assert weight.size(1) == 1 or weight.size(1) == loss.size(1)
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


def _expand_onehot_labels(labels, label_weights, target_shape, ignore_index):
    """Expand onehot labels to match the size of prediction."""
    valid_mask = (labels >= 0) & (labels != ignore_index)
    classes = torch.arange(target_shape[1], device=labels.device)
    if labels.dim() == 3:
        one_hot = (labels.unsqueeze(1) == classes[None, :, None, None]) & valid_mask.unsqueeze(1)
    else:
        one_hot = (labels.unsqueeze(1) == classes[None, :]) & valid_mask.unsqueeze(1)
    bin_labels = one_hot.to(labels.dtype)

    valid_mask = valid_mask.unsqueeze(1).expand(target_shape).float()

    if label_weights is None:
        bin_label_weights = valid_mask
    else:
        bin_label_weights = label_weights.unsqueeze(1).expand(target_shape)
        bin_label_weights = bin_label_weights * valid_mask

    return bin_labels, bin_label_weights, valid_mask


def binary_cross_entropy(pred,
                         label,
                         weight=None,
                         reduction='mean',
                         avg_factor=None,
                         class_weight=None,
                         ignore_index=-100,
                         avg_non_ignore=False,
                         **kwargs):
    """Calculate the binary CrossEntropy loss.

    Args:
        pred (torch.Tensor): The prediction with shape (N, 1).
        label (torch.Tensor): The learning label of the prediction.
            Note: In bce loss, label < 0 is invalid.
        weight (torch.Tensor, optional): Sample-wise loss weight.
        reduction (str, optional): The method used to reduce the loss.
            Options are "none", "mean" and "sum".
        avg_factor (int, optional): Average factor that is used to average
            the loss. Defaults to None.
        class_weight (list[float], optional): The weight for each class.
        ignore_index (int): The label index to be ignored. Default: -100.
        avg_non_ignore (bool): The flag decides to whether the loss is
            only averaged over non-ignored targets. Default: False.
            `New in version 0.23.0.`

    Returns:
        torch.Tensor: The calculated loss
    """
    if pred.size(1) == 1:
        # For binary class segmentation, the shape of pred is
        # [N, 1, H, W] and that of label is [N, H, W].
        # As the ignore_index often set as 255, so the
        # binary class label check should mask out
        # ignore_index
        torch.ops.wl_mmseg_sigmoid_ce.check_binary_labels(label, ignore_index)
        pred = pred.squeeze(1)
    if pred.dim() != label.dim():
        assert (pred.dim() == 2 and label.dim() == 1) or (
                pred.dim() == 4 and label.dim() == 3), \
            'Only pred shape [N, C], label shape [N] or pred shape [N, C, ' \
            'H, W], label shape [N, H, W] are supported'
        # `weight` returned from `_expand_onehot_labels`
        # has been treated for valid (non-ignore) pixels
        label, weight, valid_mask = _expand_onehot_labels(
            label, weight, pred.shape, ignore_index)
    else:
        # should mask out the ignored elements
        valid_mask = ((label >= 0) & (label != ignore_index)).float()
        if weight is not None:
            weight = weight * valid_mask
        else:
            weight = valid_mask
    # average loss over non-ignored and valid elements
    if reduction == 'mean' and avg_factor is None and avg_non_ignore:
        avg_factor = valid_mask.sum()

    loss = F.binary_cross_entropy_with_logits(
        pred, label.float(), pos_weight=class_weight, reduction='none')
    # do the reduction for the weighted loss
    loss = weight_reduce_loss(
        loss, weight, reduction=reduction, avg_factor=avg_factor)

    return loss


class CrossEntropyLoss(nn.Module):
    """CrossEntropyLoss (sigmoid mode; the softmax and mask criteria are left out)."""

    def __init__(self,
                 use_sigmoid=False,
                 use_mask=False,
                 reduction='mean',
                 class_weight=None,
                 loss_weight=1.0,
                 loss_name='loss_ce',
                 avg_non_ignore=False):
        super().__init__()
        assert (use_sigmoid is False) or (use_mask is False)
        self.use_sigmoid = use_sigmoid
        self.use_mask = use_mask
        self.reduction = reduction
        self.loss_weight = loss_weight
        self.class_weight = get_class_weight(class_weight)
        self.avg_non_ignore = avg_non_ignore
        if not self.avg_non_ignore and self.reduction == 'mean':
            warnings.warn(
                'Default ``avg_non_ignore`` is False, if you would like to '
                'ignore the certain label and average loss over non-ignore '
                'labels, which is the same with PyTorch official '
                'cross_entropy, set ``avg_non_ignore=True``.')

        assert self.use_sigmoid, 'only the sigmoid criterion is kept in this reduction'
        self.cls_criterion = binary_cross_entropy
        self._loss_name = loss_name

    def extra_repr(self):
        """Extra repr."""
        s = f'avg_non_ignore={self.avg_non_ignore}'
        return s

    def forward(self,
                cls_score,
                label,
                weight=None,
                avg_factor=None,
                reduction_override=None,
                ignore_index=-100,
                **kwargs):
        """Forward function."""
        assert reduction_override in (None, 'none', 'mean', 'sum')
        reduction = (
            reduction_override if reduction_override else self.reduction)
        if self.class_weight is not None:
            class_weight = cls_score.new_tensor(self.class_weight)
        else:
            class_weight = None
        # Note: for BCE loss, label < 0 is invalid.
        loss_cls = self.loss_weight * self.cls_criterion(
            cls_score,
            label,
            weight,
            class_weight=class_weight,
            reduction=reduction,
            avg_factor=avg_factor,
            avg_non_ignore=self.avg_non_ignore,
            ignore_index=ignore_index,
            **kwargs)
        return loss_cls

    @property
    def loss_name(self):
        """Loss Name."""
        return self._loss_name


def make():
    torch.manual_seed(0)
    return CrossEntropyLoss(use_sigmoid=True, avg_non_ignore=True, loss_weight=0.4)


def _labels(g, n, h, w, classes, ignore_frac):
    lab = torch.randint(0, classes, (n, h, w), generator=g)
    ignore = torch.rand(n, h, w, generator=g) < ignore_frac
    return torch.where(ignore, torch.full_like(lab, 255), lab)


def inputs():
    g = torch.Generator().manual_seed(9)
    return [
        (torch.randn(2, 3, 4, 4, generator=g), _labels(g, 2, 4, 4, 3, 0.2), None, None, None, 255),
        (torch.randn(1, 3, 5, 5, generator=g), _labels(g, 1, 5, 5, 3, 0.0), None, None, None, 255),
        (torch.randn(1, 3, 3, 4, generator=g), torch.full((1, 3, 4), 255), None, None, None, 255),
        (torch.randn(2, 3, 4, 4, generator=g), _labels(g, 2, 4, 4, 3, 0.3), torch.rand(2, 4, 4, generator=g), None, None, 255),
        (torch.randn(2, 3, 4, 4, generator=g), _labels(g, 2, 4, 4, 3, 0.3), None, None, 'none', 255),
        (torch.randn(2, 1, 4, 4, generator=g), _labels(g, 2, 4, 4, 2, 0.25), None, None, None, 255),
        (torch.randn(1, 1, 5, 5, generator=g), _labels(g, 1, 5, 5, 2, 0.0), torch.rand(1, 5, 5, generator=g), None, None, 255),
        (torch.randn(2, 3, 4, 4, generator=g), _labels(g, 2, 4, 4, 3, 0.2), None, 10.0, None, 255),
        (torch.randn(2, 1, 3, 3, generator=g), _labels(g, 2, 3, 3, 2, 0.5), None, None, 'sum', 255),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(10)
    return [
        # binary prediction, every pixel ignored: max() of an empty selection
        (torch.randn(1, 1, 3, 3, generator=g), torch.full((1, 3, 3), 255), None, None, None, 255),
    ]
