"""Ultralytics YOLOv8 TaskAlignedAssigner (target assignment inside the v8 detection loss).

Source: https://github.com/ultralytics/ultralytics/blob/002217d4c57509738e4dc15b9e3e6722b9e42aa6/ultralytics/utils/tal.py
(TaskAlignedAssigner: forward, get_pos_mask, get_box_metrics, iou_calculation,
select_topk_candidates, get_targets, select_candidates_in_gts, select_highest_overlaps) and
https://github.com/ultralytics/ultralytics/blob/002217d4c57509738e4dc15b9e3e6722b9e42aa6/ultralytics/utils/metrics.py
(bbox_iou, CIoU branch). Kept as in the source; a 4x4 anchor grid, 2-3 images, up to 3 gt boxes,
3 classes, topk=4.

Breaks: get_box_metrics gathers with a boolean mask and writes back through it
(`bbox_scores[mask_gt] = pd_scores[ind[0], :, ind[1]][mask_gt]`, `pd_boxes = ...[mask_gt]`,
`overlaps[mask_gt] = self.iou_calculation(gt_boxes, pd_boxes)`): data-dependent output shapes;
select_highest_overlaps branches on `if fg_mask.max() > 1:` (data-dependent branch).

HAND: the boolean-mask gathers/scatters become dense computations over all (gt, anchor) pairs
masked with torch.where (the padded gt boxes give finite CIoU values, which are then discarded);
the `fg_mask.max() > 1` branch is dropped because its body is the identity when no anchor has more
than one gt (mask_multi_gts all False, torch.where keeps mask_pos, mask_pos is already float).
"""
import math

import torch
import torch.nn as nn

KIND = "bool-mask index_put + data-dependent branch"


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
            rho2 = (
                (b2_x1 + b2_x2 - b1_x1 - b1_x2).pow(2) + (b2_y1 + b2_y2 - b1_y1 - b1_y2).pow(2)
            ) / 4  # center dist**2
            if CIoU:  # https://github.com/Zzh-tju/DIoU-SSD-pytorch/blob/master/utils/box/box_utils.py#L47
                v = (4 / math.pi**2) * ((w2 / h2).atan() - (w1 / h1).atan()).pow(2)
                with torch.no_grad():
                    alpha = v / (v - iou + (1 + eps))
                return iou - (rho2 / c2 + v * alpha)  # CIoU
            return iou - rho2 / c2  # DIoU
        c_area = cw * ch + eps  # convex area
        return iou - (c_area - union) / c_area  # GIoU https://arxiv.org/pdf/1902.09630.pdf
    return iou  # IoU


class TaskAlignedAssigner(nn.Module):
    def __init__(self, topk=13, num_classes=80, alpha=1.0, beta=6.0, eps=1e-9):
        """Initialize a TaskAlignedAssigner object with customizable hyperparameters."""
        super().__init__()
        self.topk = topk
        self.num_classes = num_classes
        self.bg_idx = num_classes
        self.alpha = alpha
        self.beta = beta
        self.eps = eps

    @torch.no_grad()
    def forward(self, pd_scores, pd_bboxes, anc_points, gt_labels, gt_bboxes, mask_gt):
        self.bs = pd_scores.shape[0]
        self.n_max_boxes = gt_bboxes.shape[1]

        if self.n_max_boxes == 0:
            device = gt_bboxes.device
            return (
                torch.full_like(pd_scores[..., 0], self.bg_idx).to(device),
                torch.zeros_like(pd_bboxes).to(device),
                torch.zeros_like(pd_scores).to(device),
                torch.zeros_like(pd_scores[..., 0]).to(device),
                torch.zeros_like(pd_scores[..., 0]).to(device),
            )

        mask_pos, align_metric, overlaps = self.get_pos_mask(
            pd_scores, pd_bboxes, gt_labels, gt_bboxes, anc_points, mask_gt
        )

        target_gt_idx, fg_mask, mask_pos = self.select_highest_overlaps(mask_pos, overlaps, self.n_max_boxes)

        # Assigned target
        target_labels, target_bboxes, target_scores = self.get_targets(gt_labels, gt_bboxes, target_gt_idx, fg_mask)

        # Normalize
        align_metric *= mask_pos
        pos_align_metrics = align_metric.amax(dim=-1, keepdim=True)  # b, max_num_obj
        pos_overlaps = (overlaps * mask_pos).amax(dim=-1, keepdim=True)  # b, max_num_obj
        norm_align_metric = (align_metric * pos_overlaps / (pos_align_metrics + self.eps)).amax(-2).unsqueeze(-1)
        target_scores = target_scores * norm_align_metric

        return target_labels, target_bboxes, target_scores, fg_mask.bool(), target_gt_idx

    def get_pos_mask(self, pd_scores, pd_bboxes, gt_labels, gt_bboxes, anc_points, mask_gt):
        """Get in_gts mask, (b, max_num_obj, h*w)."""
        mask_in_gts = self.select_candidates_in_gts(anc_points, gt_bboxes)
        # Get anchor_align metric, (b, max_num_obj, h*w)
        align_metric, overlaps = self.get_box_metrics(pd_scores, pd_bboxes, gt_labels, gt_bboxes, mask_in_gts * mask_gt)
        # Get topk_metric mask, (b, max_num_obj, h*w)
        mask_topk = self.select_topk_candidates(align_metric, topk_mask=mask_gt.expand(-1, -1, self.topk).bool())
        # Merge all mask to a final mask, (b, max_num_obj, h*w)
        mask_pos = mask_topk * mask_in_gts * mask_gt

        return mask_pos, align_metric, overlaps

    def get_box_metrics(self, pd_scores, pd_bboxes, gt_labels, gt_bboxes, mask_gt):
        """Compute alignment metric given predicted and ground truth bounding boxes."""
        na = pd_bboxes.shape[-2]
        mask_gt = mask_gt.bool()  # b, max_num_obj, h*w
        overlaps = torch.zeros([self.bs, self.n_max_boxes, na], dtype=pd_bboxes.dtype, device=pd_bboxes.device)
        bbox_scores = torch.zeros([self.bs, self.n_max_boxes, na], dtype=pd_scores.dtype, device=pd_scores.device)

        ind = torch.zeros([2, self.bs, self.n_max_boxes], dtype=torch.long)  # 2, b, max_num_obj
        ind[0] = torch.arange(end=self.bs).view(-1, 1).expand(-1, self.n_max_boxes)  # b, max_num_obj
        ind[1] = gt_labels.squeeze(-1)  # b, max_num_obj
        # Get the scores of each grid for each gt cls (dense, masked)
        bbox_scores = torch.where(mask_gt, pd_scores[ind[0], :, ind[1]], bbox_scores)  # b, max_num_obj, h*w

        # (b, max_num_obj, h*w, 4) for every (gt, anchor) pair; pairs outside mask_gt are discarded
        pd_boxes = pd_bboxes.unsqueeze(1).expand(-1, self.n_max_boxes, -1, -1)
        gt_boxes = gt_bboxes.unsqueeze(2).expand(-1, -1, na, -1)
        overlaps = torch.where(mask_gt, self.iou_calculation(gt_boxes, pd_boxes), overlaps)

        align_metric = bbox_scores.pow(self.alpha) * overlaps.pow(self.beta)
        return align_metric, overlaps

    def iou_calculation(self, gt_bboxes, pd_bboxes):
        """IoU calculation for horizontal bounding boxes."""
        return bbox_iou(gt_bboxes, pd_bboxes, xywh=False, CIoU=True).squeeze(-1).clamp_(0)

    def select_topk_candidates(self, metrics, largest=True, topk_mask=None):
        # (b, max_num_obj, topk)
        topk_metrics, topk_idxs = torch.topk(metrics, self.topk, dim=-1, largest=largest)
        if topk_mask is None:
            topk_mask = (topk_metrics.max(-1, keepdim=True)[0] > self.eps).expand_as(topk_idxs)
        # (b, max_num_obj, topk)
        topk_idxs.masked_fill_(~topk_mask, 0)

        # (b, max_num_obj, topk, h*w) -> (b, max_num_obj, h*w)
        count_tensor = torch.zeros(metrics.shape, dtype=torch.int8, device=topk_idxs.device)
        ones = torch.ones_like(topk_idxs[:, :, :1], dtype=torch.int8, device=topk_idxs.device)
        for k in range(self.topk):
            # Expand topk_idxs for each value of k and add 1 at the specified positions
            count_tensor.scatter_add_(-1, topk_idxs[:, :, k : k + 1], ones)
        # Filter invalid bboxes
        count_tensor.masked_fill_(count_tensor > 1, 0)

        return count_tensor.to(metrics.dtype)

    def get_targets(self, gt_labels, gt_bboxes, target_gt_idx, fg_mask):
        # Assigned target labels, (b, 1)
        batch_ind = torch.arange(end=self.bs, dtype=torch.int64, device=gt_labels.device)[..., None]
        target_gt_idx = target_gt_idx + batch_ind * self.n_max_boxes  # (b, h*w)
        target_labels = gt_labels.long().flatten()[target_gt_idx]  # (b, h*w)

        # Assigned target boxes, (b, max_num_obj, 4) -> (b, h*w, 4)
        target_bboxes = gt_bboxes.view(-1, gt_bboxes.shape[-1])[target_gt_idx]

        # Assigned target scores
        target_labels.clamp_(0)

        # 10x faster than F.one_hot()
        target_scores = torch.zeros(
            (target_labels.shape[0], target_labels.shape[1], self.num_classes),
            dtype=torch.int64,
            device=target_labels.device,
        )  # (b, h*w, 80)
        target_scores.scatter_(2, target_labels.unsqueeze(-1), 1)

        fg_scores_mask = fg_mask[:, :, None].repeat(1, 1, self.num_classes)  # (b, h*w, 80)
        target_scores = torch.where(fg_scores_mask > 0, target_scores, 0)

        return target_labels, target_bboxes, target_scores

    @staticmethod
    def select_candidates_in_gts(xy_centers, gt_bboxes, eps=1e-9):
        n_anchors = xy_centers.shape[0]
        bs, n_boxes, _ = gt_bboxes.shape
        lt, rb = gt_bboxes.view(-1, 1, 4).chunk(2, 2)  # left-top, right-bottom
        bbox_deltas = torch.cat((xy_centers[None] - lt, rb - xy_centers[None]), dim=2).view(bs, n_boxes, n_anchors, -1)
        # return (bbox_deltas.min(3)[0] > eps).to(gt_bboxes.dtype)
        return bbox_deltas.amin(3).gt_(eps)

    @staticmethod
    def select_highest_overlaps(mask_pos, overlaps, n_max_boxes):
        # (b, n_max_boxes, h*w) -> (b, h*w)
        fg_mask = mask_pos.sum(-2)
        # one anchor may be assigned to multiple gt_bboxes; where none is, this is the identity
        mask_multi_gts = (fg_mask.unsqueeze(1) > 1).expand(-1, n_max_boxes, -1)  # (b, n_max_boxes, h*w)
        max_overlaps_idx = overlaps.argmax(1)  # (b, h*w)

        is_max_overlaps = torch.zeros(mask_pos.shape, dtype=mask_pos.dtype, device=mask_pos.device)
        is_max_overlaps.scatter_(1, max_overlaps_idx.unsqueeze(1), 1)

        mask_pos = torch.where(mask_multi_gts, is_max_overlaps, mask_pos).float()  # (b, n_max_boxes, h*w)
        fg_mask = mask_pos.sum(-2)
        # Find each grid serve which gt(index)
        target_gt_idx = mask_pos.argmax(-2)  # (b, h*w)
        return target_gt_idx, fg_mask, mask_pos


def make():
    torch.manual_seed(0)
    return TaskAlignedAssigner(topk=4, num_classes=3, alpha=0.5, beta=6.0)


def _anchors(n=4, stride=8.0):
    s = torch.arange(n, dtype=torch.float32) + 0.5
    sy, sx = torch.meshgrid(s, s, indexing="ij")
    return torch.stack((sx, sy), -1).view(-1, 2) * stride


def _case(g, bs, boxes_per_img, overlap):
    anc = _anchors()
    na, nc = anc.shape[0], 3
    pd_scores = torch.rand(bs, na, nc, generator=g)
    wh = 4.0 + 12.0 * torch.rand(bs, na, 2, generator=g)
    jitter = 2.0 * torch.randn(bs, na, 2, generator=g)
    ctr = anc[None] + jitter
    pd_bboxes = torch.cat((ctr - wh / 2, ctr + wh / 2), -1)
    nmax = max(boxes_per_img)
    gt_bboxes = torch.zeros(bs, nmax, 4)
    gt_labels = torch.zeros(bs, nmax, 1, dtype=torch.long)
    mask_gt = torch.zeros(bs, nmax, 1)
    for b, nb in enumerate(boxes_per_img):
        for i in range(nb):
            if overlap:
                x1y1 = 2.0 + 6.0 * torch.rand(2, generator=g)
                x2y2 = x1y1 + 14.0 + 8.0 * torch.rand(2, generator=g)
            else:
                # disjoint quadrants
                qx, qy = (i % 2) * 16.0, (i // 2) * 16.0
                x1y1 = torch.tensor([qx, qy]) + 1.0 + 2.0 * torch.rand(2, generator=g)
                x2y2 = x1y1 + 8.0 + 4.0 * torch.rand(2, generator=g)
            gt_bboxes[b, i] = torch.cat((x1y1, x2y2))
            gt_labels[b, i, 0] = int(torch.randint(0, nc, (1,), generator=g))
            mask_gt[b, i, 0] = 1.0
    return (pd_scores, pd_bboxes, anc, gt_labels, gt_bboxes, mask_gt)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = [
        _case(g, 2, [3, 2], True),
        _case(g, 2, [2, 1], False),
        _case(g, 3, [1, 3, 2], True),
        _case(g, 2, [3, 3], False),
        _case(g, 2, [2, 2], True),
        _case(g, 1, [1], False),
        _case(g, 3, [3, 0, 1], True),
        _case(g, 2, [3, 1], True),
    ]
    # no gt boxes at all: early return
    pd_scores, pd_bboxes, anc, _, _, _ = _case(g, 2, [1, 1], False)
    out.append((pd_scores, pd_bboxes, anc, torch.zeros(2, 0, 1, dtype=torch.long), torch.zeros(2, 0, 4), torch.zeros(2, 0, 1)))
    return out
