"""mmdet FCOSHead.loss_by_feat: positives by nonzero, ``max(reduce_mean(num_pos), 1.0)`` and the
``if len(pos_inds) > 0`` branch of the box/centerness losses.

A one-level FCOS head (cls / reg / centerness 1x1 convs); the per-point targets (``labels`` with
background = ``num_classes``, ``bbox_targets`` as integer l,t,r,b pixel distances, so they carry no gradient, as the
output of ``get_targets`` does not) are given instead of
``get_targets``. The loss body is kept as in the source, with mmdet's ``reduce_mean``,
``distance2bbox``, ``centerness_target``, sigmoid focal loss, IoU loss (``mode='log'``) and
sigmoid-BCE centerness loss reduced to plain functions with mmdet's ``avg_factor`` semantics.

Source: https://github.com/open-mmlab/mmdetection/blob/main/mmdet/models/dense_heads/fcos_head.py
        https://github.com/open-mmlab/mmdetection/blob/main/mmdet/utils/dist_utils.py (reduce_mean)

Breaks: ``.nonzero()`` (dynamic shape) for ``pos_inds``. (``max(tensor, 1.0)`` / ``max(tensor, 1e-6)``
are turned into clamps by dynamo without a break, and ``len(pos_inds)`` is a static size in the
frame resumed after the nonzero.)

HAND: every point is kept and the positives are a 0/1 weight: ``num_pos`` and ``centerness_denorm``
become ``clamp(min=...)`` of 0-d tensors, the box targets of negative points are replaced by a
harmless box before decoding (safe operand, so no NaN reaches the masked sums or gradients), and
the box/centerness losses are sums weighted by the positive mask (0 with zero gradient when there
is no positive, as ``pos_bbox_preds.sum()`` of an empty tensor is).
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

INF = 1e8


def reduce_mean(tensor):
    """"Obtain the mean of tensor on different GPUs."""
    if not (dist.is_available() and dist.is_initialized()):
        return tensor
    tensor = tensor.clone()
    dist.all_reduce(tensor.div_(dist.get_world_size()), op=dist.ReduceOp.SUM)
    return tensor


def weight_reduce_loss(loss, weight=None, avg_factor=None):
    if weight is not None:
        loss = loss * weight
    if avg_factor is None:
        return loss.mean()
    eps = torch.finfo(torch.float32).eps
    return loss.sum() / (avg_factor + eps)


def sigmoid_focal_loss(pred, target, num_classes, gamma=2.0, alpha=0.25, avg_factor=None):
    target = F.one_hot(target, num_classes=num_classes + 1)[:, :num_classes].type_as(pred)
    pred_sigmoid = pred.sigmoid()
    pt = (1 - pred_sigmoid) * target + pred_sigmoid * (1 - target)
    focal_weight = (alpha * target + (1 - alpha) * (1 - target)) * pt.pow(gamma)
    loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none") * focal_weight
    return weight_reduce_loss(loss, None, avg_factor)


def bbox_overlaps_aligned(bboxes1, bboxes2, eps=1e-6):
    area1 = (bboxes1[..., 2] - bboxes1[..., 0]) * (bboxes1[..., 3] - bboxes1[..., 1])
    area2 = (bboxes2[..., 2] - bboxes2[..., 0]) * (bboxes2[..., 3] - bboxes2[..., 1])
    lt = torch.max(bboxes1[..., :2], bboxes2[..., :2])
    rb = torch.min(bboxes1[..., 2:], bboxes2[..., 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    union = torch.max(area1 + area2 - overlap, area1.new_tensor([eps]))
    return overlap / union


def iou_loss(pred, target, weight, avg_factor, eps=1e-6):
    ious = bbox_overlaps_aligned(pred, target).clamp(min=eps)
    loss = -ious.log()
    return weight_reduce_loss(loss, weight, avg_factor)


def distance2bbox(points, distance):
    x1 = points[..., 0] - distance[..., 0]
    y1 = points[..., 1] - distance[..., 1]
    x2 = points[..., 0] + distance[..., 2]
    y2 = points[..., 1] + distance[..., 3]
    return torch.stack([x1, y1, x2, y2], -1)


class FCOSHead(nn.Module):
    def __init__(self, num_classes=3, in_channels=4, stride=8):
        super().__init__()
        self.num_classes = num_classes
        self.stride = stride
        self.conv_cls = nn.Conv2d(in_channels, num_classes, 1)
        self.conv_reg = nn.Conv2d(in_channels, 4, 1)
        self.conv_centerness = nn.Conv2d(in_channels, 1, 1)

    def centerness_target(self, pos_bbox_targets):
        # only calculate pos centerness targets, otherwise there may be nan
        left_right = pos_bbox_targets[:, [0, 2]]
        top_bottom = pos_bbox_targets[:, [1, 3]]
        if len(left_right) == 0:
            centerness_targets = left_right[..., 0]
        else:
            centerness_targets = (
                left_right.min(dim=-1)[0] / left_right.max(dim=-1)[0]) * (
                    top_bottom.min(dim=-1)[0] / top_bottom.max(dim=-1)[0])
        return torch.sqrt(centerness_targets)

    def get_points(self, h, w, dtype):
        x_range = torch.arange(0, w * self.stride, self.stride, dtype=dtype)
        y_range = torch.arange(0, h * self.stride, self.stride, dtype=dtype)
        y, x = torch.meshgrid(y_range, x_range, indexing="ij")
        return torch.stack((x.reshape(-1), y.reshape(-1)), dim=-1) + self.stride // 2

    def forward(self, feat, labels, bbox_targets):
        num_imgs, _, h, w = feat.shape
        cls_score = self.conv_cls(feat)
        bbox_pred = self.conv_reg(feat).float().exp()
        centerness = self.conv_centerness(feat)

        flatten_cls_scores = cls_score.permute(0, 2, 3, 1).reshape(-1, self.num_classes)
        flatten_bbox_preds = bbox_pred.permute(0, 2, 3, 1).reshape(-1, 4)
        flatten_centerness = centerness.permute(0, 2, 3, 1).reshape(-1)
        flatten_labels = labels.reshape(-1)
        flatten_bbox_targets = bbox_targets.reshape(-1, 4).to(bbox_pred.dtype)
        flatten_points = self.get_points(h, w, bbox_pred.dtype).repeat(num_imgs, 1)

        # FG cat_id: [0, num_classes -1], BG cat_id: num_classes
        bg_class_ind = self.num_classes
        pos_inds = ((flatten_labels >= 0)
                    & (flatten_labels < bg_class_ind)).nonzero().reshape(-1)
        num_pos = torch.tensor(
            len(pos_inds), dtype=torch.float, device=bbox_pred.device)
        num_pos = max(reduce_mean(num_pos), 1.0)
        loss_cls = sigmoid_focal_loss(
            flatten_cls_scores, flatten_labels, self.num_classes, avg_factor=num_pos)

        pos_bbox_preds = flatten_bbox_preds[pos_inds]
        pos_centerness = flatten_centerness[pos_inds]
        pos_bbox_targets = flatten_bbox_targets[pos_inds]
        pos_centerness_targets = self.centerness_target(pos_bbox_targets)
        # centerness weighted iou loss
        centerness_denorm = max(
            reduce_mean(pos_centerness_targets.sum().detach()), 1e-6)

        if len(pos_inds) > 0:
            pos_points = flatten_points[pos_inds]
            pos_decoded_bbox_preds = distance2bbox(pos_points, pos_bbox_preds)
            pos_decoded_target_preds = distance2bbox(pos_points,
                                                     pos_bbox_targets)
            loss_bbox = iou_loss(
                pos_decoded_bbox_preds,
                pos_decoded_target_preds,
                weight=pos_centerness_targets,
                avg_factor=centerness_denorm)
            loss_centerness = weight_reduce_loss(
                F.binary_cross_entropy_with_logits(
                    pos_centerness, pos_centerness_targets, reduction="none"),
                None, avg_factor=num_pos)
        else:
            loss_bbox = pos_bbox_preds.sum()
            loss_centerness = pos_centerness.sum()

        return dict(
            loss_cls=loss_cls,
            loss_bbox=loss_bbox,
            loss_centerness=loss_centerness)


def make():
    torch.manual_seed(0)
    return FCOSHead()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for n, h, w, p_pos in [(2, 3, 3, 0.3), (1, 4, 4, 0.5), (2, 2, 3, 0.0), (1, 3, 5, 1.0),
                           (3, 2, 2, 0.2), (1, 1, 1, 1.0), (2, 4, 2, 0.1), (1, 2, 2, 0.0)]:
        feat = torch.randn(n, 4, h, w, generator=g)
        labels = torch.randint(0, 3, (n, h, w), generator=g)
        labels[torch.rand(n, h, w, generator=g) >= p_pos] = 3  # background
        targets = torch.randint(1, 21, (n, h, w, 4), generator=g)  # integer pixel distances: no gradient
        out.append((feat, labels, targets))
    return out


KIND = "dynamic-shape+branch"
GRAD = True
