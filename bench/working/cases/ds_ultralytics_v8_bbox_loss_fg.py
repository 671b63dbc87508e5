"""YOLOv8 detection loss, box part: CIoU + DFL computed on the foreground anchors only.

Source: https://github.com/ultralytics/ultralytics/blob/v8.2.0/ultralytics/utils/loss.py
(`v8DetectionLoss.__call__`, `v8DetectionLoss.bbox_decode`, `BboxLoss.forward`, `DFLoss`) and
https://github.com/ultralytics/ultralytics/blob/v8.2.0/ultralytics/utils/metrics.py (`bbox_iou`),
https://github.com/ultralytics/ultralytics/blob/v8.2.0/ultralytics/utils/tal.py (`bbox2dist`, `dist2bbox`).
The TaskAlignedAssigner is replaced by its outputs (given, under no_grad).

Breaks: `if fg_mask.sum():` (data-dependent branch) and the boolean-mask gathers `target_scores.sum(-1)[fg_mask]`,
`pred_bboxes[fg_mask]`, `pred_dist[fg_mask]` in `BboxLoss.forward`.

HAND: partial — the `if fg_mask.sum():` branch stays (dropping it would give the box-branch inputs a
zero gradient instead of none when no anchor is foreground); CIoU and DFL are computed for every anchor and
weighted by `target_scores.sum(-1) * fg_mask`, with the background anchors' target box replaced by
the (detached) predicted box so that their unused CIoU terms stay finite.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "mask-loss"
GRAD = True


def bbox_iou(box1, box2, xywh=True, GIoU=False, DIoU=False, CIoU=False, eps=1e-7):
    # Get the coordinates of bounding boxes
    if xywh:  # transform from xywh to xyxy
        (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
        w1_, h1_, w2_, h2_ = w1 / 2, h1 / 2, w2 / 2, h2 / 2
        b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1_, x1 + w1_, y1 - h1_, y1 + h1_
        b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2_, x2 + w2_, y2 - h2_, y2 + h2_
    else:  # x1, y1, x2, y2 = box1
        b1_x1, b1_y1, b1_x2, b1_y2 = box1.chunk(4, -1)
        b2_x1, b2_y1, b2_x2, b2_y2 = box2.chunk(4, -1)
        w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1 + eps
        w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1 + eps

    # Intersection area
    inter = (b1_x2.minimum(b2_x2) - b1_x1.maximum(b2_x1)).clamp_(0) * (
        b1_y2.minimum(b2_y2) - b1_y1.maximum(b2_y1)
    ).clamp_(0)

    # Union Area
    union = w1 * h1 + w2 * h2 - inter + eps

    # IoU
    iou = inter / union
    if CIoU or DIoU or GIoU:
        cw = b1_x2.maximum(b2_x2) - b1_x1.minimum(b2_x1)  # convex (smallest enclosing box) width
        ch = b1_y2.maximum(b2_y2) - b1_y1.minimum(b2_y1)  # convex height
        if CIoU or DIoU:  # Distance or Complete IoU https://arxiv.org/abs/1911.08287v1
            c2 = cw.pow(2) + ch.pow(2) + eps  # convex diagonal squared
            rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2).pow(2) + (b2_y1 + b2_y2 - b1_y1 - b1_y2).pow(2)) / 4  # center dist**2
            if CIoU:  # https://github.com/Zzh-tju/DIoU-SSD-pytorch/blob/master/utils/box/box_utils.py#L47
                v = (4 / math.pi**2) * ((w2 / h2).atan() - (w1 / h1).atan()).pow(2)
                with torch.no_grad():
                    alpha = v / (v - iou + (1 + eps))
                return iou - (rho2 / c2 + v * alpha)  # CIoU
            return iou - rho2 / c2  # DIoU
        c_area = cw * ch + eps  # convex area
        return iou - (c_area - union) / c_area  # GIoU https://arxiv.org/pdf/1902.09593.pdf
    return iou  # IoU


def dist2bbox(distance, anchor_points, xywh=True, dim=-1):
    """Transform distance(ltrb) to box(xywh or xyxy)."""
    lt, rb = distance.chunk(2, dim)
    x1y1 = anchor_points - lt
    x2y2 = anchor_points + rb
    if xywh:
        c_xy = (x1y1 + x2y2) / 2
        wh = x2y2 - x1y1
        return torch.cat((c_xy, wh), dim)  # xywh bbox
    return torch.cat((x1y1, x2y2), dim)  # xyxy bbox


def bbox2dist(anchor_points, bbox, reg_max):
    """Transform bbox(xyxy) to dist(ltrb)."""
    x1y1, x2y2 = bbox.chunk(2, -1)
    return torch.cat((anchor_points - x1y1, x2y2 - anchor_points), -1).clamp_(0, reg_max - 0.01)  # dist (lt, rb)


class DFLoss(nn.Module):
    """Criterion class for computing DFL losses during training."""

    def __init__(self, reg_max=16) -> None:
        super().__init__()
        self.reg_max = reg_max

    def __call__(self, pred_dist, target):
        target = target.clamp_(0, self.reg_max - 1 - 0.01)
        tl = target.long()  # target left
        tr = tl + 1  # target right
        wl = tr - target  # weight left
        wr = 1 - wl  # weight right
        return (
            F.cross_entropy(pred_dist, tl.view(-1), reduction="none").view(tl.shape) * wl
            + F.cross_entropy(pred_dist, tr.view(-1), reduction="none").view(tl.shape) * wr
        ).mean(-1, keepdim=True)


class BboxLoss(nn.Module):
    def __init__(self, reg_max=16):
        super().__init__()
        self.dfl_loss = DFLoss(reg_max) if reg_max > 1 else None

    def forward(self, pred_dist, pred_bboxes, anchor_points, target_bboxes, target_scores, target_scores_sum, fg_mask):
        """IoU loss."""
        weight = target_scores.sum(-1)[fg_mask].unsqueeze(-1)
        iou = bbox_iou(pred_bboxes[fg_mask], target_bboxes[fg_mask], xywh=False, CIoU=True)
        loss_iou = ((1.0 - iou) * weight).sum() / target_scores_sum

        # DFL loss
        if self.dfl_loss:
            target_ltrb = bbox2dist(anchor_points, target_bboxes, self.dfl_loss.reg_max - 1)
            loss_dfl = self.dfl_loss(pred_dist[fg_mask].view(-1, self.dfl_loss.reg_max), target_ltrb[fg_mask]) * weight
            loss_dfl = loss_dfl.sum() / target_scores_sum
        else:
            loss_dfl = torch.tensor(0.0).to(pred_dist.device)

        return loss_iou, loss_dfl


class Hyp:
    box, cls, dfl = 7.5, 0.5, 1.5


class v8DetectionLoss(nn.Module):
    def __init__(self, nc=3, reg_max=4):
        super().__init__()
        self.bce = nn.BCEWithLogitsLoss(reduction="none")
        self.hyp = Hyp()
        self.nc = nc
        self.reg_max = reg_max
        self.use_dfl = reg_max > 1
        self.bbox_loss = BboxLoss(reg_max)
        self.register_buffer("proj", torch.arange(reg_max, dtype=torch.float))

    def bbox_decode(self, anchor_points, pred_dist):
        """Decode predicted object bounding box coordinates from anchor points and distribution."""
        if self.use_dfl:
            b, a, c = pred_dist.shape  # batch, anchors, channels
            pred_dist = pred_dist.view(b, a, 4, c // 4).softmax(3).matmul(self.proj.type(pred_dist.dtype))
        return dist2bbox(pred_dist, anchor_points, xywh=False)

    def forward(self, pred_distri, pred_scores, anchor_points, stride_tensor, assigned):
        loss = torch.zeros(3, device=pred_distri.device)  # box, cls, dfl
        dtype = pred_scores.dtype
        batch_size = pred_scores.shape[0]
        pred_bboxes = self.bbox_decode(anchor_points, pred_distri)  # xyxy, (b, h*w, 4)

        # stand-in for self.assigner(...) (TaskAlignedAssigner runs under torch.no_grad)
        with torch.no_grad():
            target_bboxes, target_scores, fg_mask = (t.detach().clone() for t in assigned)

        target_scores_sum = max(target_scores.sum(), 1)

        # Cls loss
        loss[1] = self.bce(pred_scores, target_scores.to(dtype)).sum() / target_scores_sum  # BCE

        # Bbox loss
        if fg_mask.sum():
            target_bboxes /= stride_tensor
            loss[0], loss[2] = self.bbox_loss(
                pred_distri, pred_bboxes, anchor_points, target_bboxes, target_scores, target_scores_sum, fg_mask
            )

        loss[0] *= self.hyp.box  # box gain
        loss[1] *= self.hyp.cls  # cls gain
        loss[2] *= self.hyp.dfl  # dfl gain

        return loss.sum() * batch_size, loss.detach()  # loss(box, cls, dfl)


def make():
    torch.manual_seed(0)
    return v8DetectionLoss()


def _case(g, b, n_fg, score_scale=1.0):
    # a 3x3 grid at stride 8: 9 anchors
    ys, xs = torch.meshgrid(torch.arange(3) + 0.5, torch.arange(3) + 0.5, indexing="ij")
    anchor_points = torch.stack((xs, ys), -1).view(-1, 2)
    stride_tensor = torch.full((9, 1), 8.0)
    pred_distri = torch.randn(b, 9, 16, generator=g)
    pred_scores = torch.randn(b, 9, 3, generator=g)
    fg_mask = torch.zeros(b, 9, dtype=torch.bool)
    for i in range(b):
        fg_mask[i, torch.randperm(9, generator=g)[: n_fg[i]]] = True
    centers = anchor_points * 8 + torch.rand(b, 9, 2, generator=g) * 4 - 2
    wh = torch.rand(b, 9, 2, generator=g) * 20 + 4
    target_bboxes = torch.cat((centers - wh / 2, centers + wh / 2), -1) * fg_mask[..., None]
    target_scores = torch.rand(b, 9, 3, generator=g) * score_scale * fg_mask[..., None]
    return pred_distri, pred_scores, anchor_points, stride_tensor, (target_bboxes, target_scores, fg_mask)


def inputs():
    g = torch.Generator().manual_seed(5)
    return [
        _case(g, 1, [3]),
        _case(g, 2, [2, 4]),
        _case(g, 2, [0, 0]),            # no foreground: box losses stay 0
        _case(g, 1, [9]),
        _case(g, 3, [1, 0, 5]),
        _case(g, 2, [1, 1], 0.2),       # target scores sum below 1: divide by 1
        _case(g, 1, [0]),
        _case(g, 2, [6, 2], 0.05),
        _case(g, 4, [2, 3, 0, 1]),
    ]
