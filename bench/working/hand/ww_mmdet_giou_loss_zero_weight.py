"""Hand rewrite of cases/ww_mmdet_giou_loss_zero_weight.py.

mmdetection GIoULoss.forward: the box-regression loss of DETR-style and anchor-free heads, with
mmdet's early return when no box has a positive weight.

Source: https://github.com/open-mmlab/mmdetection/blob/main/mmdet/models/losses/iou_loss.py
        (GIoULoss.forward, giou_loss)
        https://github.com/open-mmlab/mmdetection/blob/main/mmdet/models/losses/utils.py
        (weighted_loss, weight_reduce_loss, reduce_loss)
        https://github.com/open-mmlab/mmdetection/blob/main/mmdet/structures/bbox/bbox_overlaps.py
        (bbox_overlaps, aligned 'giou' path)
        https://github.com/open-mmlab/mmdetection/blob/main/mmdet/models/dense_heads/detr_head.py
        (loss_by_feat_single: `loss_iou = self.loss_iou(bboxes, bboxes_gt, bbox_weights,
        avg_factor=num_total_pos)`)
Kept as in the source; the registry decorator and the unused non-aligned bbox_overlaps path are
left out. make() returns a reduced DETR box branch (linear regressor + cxcywh->xyxy decode) that
calls GIoULoss, so the gradient reaches a parameter as in training.

Breaks: `if weight is not None and not torch.any(weight > 0):` branches on a tensor value
(dynamo: "Data-dependent branching"); it is hit on every call that passes a weight (a batch whose
images have no positive box returns `(pred * weight).sum()`).

HAND: for a weight with reduction 'mean'/'sum' (no avg_factor with 'sum') the early return becomes
`torch.where(torch.any(weight > 0), loss, (pred * weight).sum())`: both are 0-d, and where's
gradient routes to the same branch (the unselected giou path gets a zero gradient; its derivative
is finite for non-degenerate boxes). Where the two paths differ in shape or in raising
(reduction 'none', avg_factor with 'sum', an invalid reduction_override) the original `if` is kept,
so the rewrite is partial; the corpus inputs use weights only with 'mean'/'sum' as the
DETR/RTMDet heads do.
"""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    reduction_enum = F._Reduction.get_enum(reduction)
    # none: 0, elementwise_mean:1, sum: 2
    if reduction_enum == 0:
        return loss
    elif reduction_enum == 1:
        return loss.mean()
    elif reduction_enum == 2:
        return loss.sum()


def weight_reduce_loss(loss, weight=None, reduction="mean", avg_factor=None):
    # if weight is specified, apply element-wise weight
    if weight is not None:
        loss = loss * weight

    # if avg_factor is not specified, just reduce the loss
    if avg_factor is None:
        loss = reduce_loss(loss, reduction)
    else:
        # if reduction is mean, then average the loss by avg_factor
        if reduction == "mean":
            # Avoid causing ZeroDivisionError when avg_factor is 0.0,
            # i.e., all labels of an image belong to ignore index.
            eps = torch.finfo(torch.float32).eps
            loss = loss.sum() / (avg_factor + eps)
        # if reduction is 'none', then do nothing, otherwise raise an error
        elif reduction != "none":
            raise ValueError('avg_factor can not be used with reduction="sum"')
    return loss


def weighted_loss(loss_func):
    @functools.wraps(loss_func)
    def wrapper(pred, target, weight=None, reduction="mean", avg_factor=None, **kwargs):
        # get element-wise loss
        loss = loss_func(pred, target, **kwargs)
        loss = weight_reduce_loss(loss, weight, reduction, avg_factor)
        return loss

    return wrapper


def fp16_clamp(x, min=None, max=None):
    if not x.is_cuda and x.dtype == torch.float16:
        # clamp for cpu float16, tensor fp16 has no clamp implementation
        return x.float().clamp(min, max).half()
    return x.clamp(min, max)


def bbox_overlaps(bboxes1, bboxes2, mode="iou", is_aligned=False, eps=1e-6):
    assert mode in ["iou", "iof", "giou"], f"Unsupported mode {mode}"
    # Either the boxes are empty or the length of boxes' last dimension is 4
    assert bboxes1.size(-1) == 4 or bboxes1.size(0) == 0
    assert bboxes2.size(-1) == 4 or bboxes2.size(0) == 0

    # Batch dim must be the same
    # Batch dim: (B1, B2, ... Bn)
    assert bboxes1.shape[:-2] == bboxes2.shape[:-2]
    batch_shape = bboxes1.shape[:-2]

    rows = bboxes1.size(-2)
    cols = bboxes2.size(-2)
    assert is_aligned and rows == cols

    if rows * cols == 0:
        return bboxes1.new(batch_shape + (rows,))

    area1 = (bboxes1[..., 2] - bboxes1[..., 0]) * (bboxes1[..., 3] - bboxes1[..., 1])
    area2 = (bboxes2[..., 2] - bboxes2[..., 0]) * (bboxes2[..., 3] - bboxes2[..., 1])

    lt = torch.max(bboxes1[..., :2], bboxes2[..., :2])  # [B, rows, 2]
    rb = torch.min(bboxes1[..., 2:], bboxes2[..., 2:])  # [B, rows, 2]

    wh = fp16_clamp(rb - lt, min=0)
    overlap = wh[..., 0] * wh[..., 1]

    if mode in ["iou", "giou"]:
        union = area1 + area2 - overlap
    else:
        union = area1
    if mode == "giou":
        enclosed_lt = torch.min(bboxes1[..., :2], bboxes2[..., :2])
        enclosed_rb = torch.max(bboxes1[..., 2:], bboxes2[..., 2:])

    eps = union.new_tensor([eps])
    union = torch.max(union, eps)
    ious = overlap / union
    if mode in ["iou", "iof"]:
        return ious
    # calculate gious
    enclose_wh = fp16_clamp(enclosed_rb - enclosed_lt, min=0)
    enclose_area = enclose_wh[..., 0] * enclose_wh[..., 1]
    enclose_area = torch.max(enclose_area, eps)
    gious = ious - (enclose_area - union) / enclose_area
    return gious


@weighted_loss
def giou_loss(pred: Tensor, target: Tensor, eps: float = 1e-7) -> Tensor:
    # avoid fp16 overflow
    if pred.dtype == torch.float16:
        fp16 = True
        pred = pred.to(torch.float32)
    else:
        fp16 = False

    gious = bbox_overlaps(pred, target, mode="giou", is_aligned=True, eps=eps)

    if fp16:
        gious = gious.to(torch.float16)

    loss = 1 - gious
    return loss


class GIoULoss(nn.Module):
    def __init__(self, eps: float = 1e-6, reduction: str = "mean", loss_weight: float = 1.0) -> None:
        super().__init__()
        self.eps = eps
        self.reduction = reduction
        self.loss_weight = loss_weight

    def forward(self, pred, target, weight=None, avg_factor=None, reduction_override=None, **kwargs):
        reduction = reduction_override if reduction_override else self.reduction
        select = weight is not None
        if weight is not None and (
            reduction_override not in (None, "none", "mean", "sum")
            or reduction == "none"
            or (avg_factor is not None and reduction == "sum")
        ):
            # here the early return differs from the loss in shape or in raising: kept as in the source
            select = False
            if not torch.any(weight > 0):
                if pred.dim() == weight.dim() + 1:
                    weight = weight.unsqueeze(1)
                return (pred * weight).sum()  # 0
        if select:
            has_pos = torch.any(weight > 0)
            zero_weight = weight.unsqueeze(1) if pred.dim() == weight.dim() + 1 else weight
            zero_loss = (pred * zero_weight).sum()  # 0
        assert reduction_override in (None, "none", "mean", "sum")
        if weight is not None and weight.dim() > 1:
            # TODO: remove this in the future
            # reduce the weight of shape (n, 4) to (n,) to match the
            # giou_loss of shape (n,)
            assert weight.shape == pred.shape
            weight = weight.mean(-1)
        loss = self.loss_weight * giou_loss(
            pred, target, weight, eps=self.eps, reduction=reduction, avg_factor=avg_factor, **kwargs
        )
        if select:
            loss = torch.where(has_pos, loss, zero_loss)
        return loss


def bbox_cxcywh_to_xyxy(bbox):
    cx, cy, w, h = bbox.split((1, 1, 1, 1), dim=-1)
    bbox_new = [(cx - 0.5 * w), (cy - 0.5 * h), (cx + 0.5 * w), (cy + 0.5 * h)]
    return torch.cat(bbox_new, dim=-1)


class DETRRegBranch(nn.Module):
    """The box branch of mmdet's DETRHead.loss_by_feat_single, reduced: a linear regressor, the
    cxcywh -> xyxy decode scaled by the image size, and loss_iou = GIoULoss. The matched gt boxes
    arrive as integer pixel boxes (they come from the assigner, without gradient)."""

    def __init__(self, embed_dims=16, img_size=64):
        super().__init__()
        self.fc_reg = nn.Linear(embed_dims, 4)
        self.img_size = img_size
        self.loss_iou = GIoULoss(eps=1e-6, reduction="mean", loss_weight=2.0)

    def forward(self, feats, gt_bboxes, bbox_weights=None, avg_factor=None, reduction_override=None):
        bbox_pred = self.fc_reg(feats).sigmoid()
        factors = feats.new_tensor([self.img_size] * 4)
        bboxes = bbox_cxcywh_to_xyxy(bbox_pred) * factors
        bboxes_gt = gt_bboxes.to(bboxes.dtype)
        return self.loss_iou(bboxes, bboxes_gt, bbox_weights, avg_factor=avg_factor, reduction_override=reduction_override)


KIND = "data-dependent early return (torch.any)"
GRAD = True


def make():
    torch.manual_seed(0)
    return DETRRegBranch()


def _case(g, n):
    feats = torch.randn(n, 16, generator=g)
    xy = torch.randint(0, 40, (n, 2), generator=g)
    wh = torch.randint(4, 24, (n, 2), generator=g)
    return feats, torch.cat([xy, xy + wh], dim=1)


def inputs():
    g = torch.Generator().manual_seed(0)
    cases = []
    cases.append(_case(g, 6))  # no weight
    w = (torch.rand(8, generator=g) > 0.5).float()
    w[0] = 1.0
    cases.append((*_case(g, 8), w))  # some positives
    cases.append((*_case(g, 5), torch.zeros(5)))  # no positive box: early return
    w4 = (torch.rand(7, 1, generator=g) > 0.3).float().expand(7, 4).contiguous()
    cases.append((*_case(g, 7), w4, 5.0))  # (n, 4) bbox_weights + avg_factor, as DETRHead
    cases.append((*_case(g, 4), torch.zeros(4, 4), 3.0))  # (n, 4) zero weights
    cases.append((*_case(g, 6), torch.rand(6, generator=g), None, "sum"))
    cases.append((*_case(g, 6), torch.zeros(6), None, "sum"))
    cases.append((*_case(g, 5), None, None, "none"))  # per-box loss
    cases.append((*_case(g, 3), torch.tensor([0.0, 0.0, 0.5]), 2.0, "mean"))
    return cases


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [
        (*_case(g, 4), torch.ones(4), None, "avg"),
        (*_case(g, 4), torch.ones(4), 2.0, "sum"),
    ]
