"""YOLOX's training loss with SimOTA label assignment (dynamic top-k matching of anchors to ground
truths, per image), on a two-level anchor-free head with the L1 term on (the last epochs of
training).

Source: https://github.com/Megvii-BaseDetection/YOLOX/blob/main/yolox/models/yolo_head.py
(`YOLOXHead.get_losses`, `get_l1_target`, `get_assignments`, `get_geometry_constraint`,
`simota_matching`), https://github.com/Megvii-BaseDetection/YOLOX/blob/main/yolox/models/losses.py
(`IOUloss`), https://github.com/Megvii-BaseDetection/YOLOX/blob/main/yolox/utils/boxes.py
(`bboxes_iou`). Reduced: the CUDA-OOM retry on the CPU (`try/except RuntimeError`, `mode="cpu"`) and
`torch.cuda.empty_cache()` are left out; the `giou` variant of IOUloss is left out.

Breaks: `int(nlabel[batch_idx])` (the number of ground truths of each image, read to the host
inside the per-image loop, so dynamo skips `get_losses`'s frame and its `[fg_masks]` gathers run
eagerly); the boolean-mask gathers `bboxes_preds_per_image[fg_mask]`, `cls_preds[batch_idx][fg_mask]`,
`obj_preds[batch_idx][fg_mask]` and `is_in_centers[:, anchor_filter]`; `torch.topk(cost[gt_idx],
k=dynamic_ks[gt_idx])` (k read from a tensor, inside the per-gt loop, so `simota_matching`'s frame is
skipped and its `if anchor_matching_gt.max() > 1:`, `cost[:, multiple_match_mask]` and
`fg_mask_inboxes.sum().item()` run eagerly too).

HAND: none — the function returns `num_fg / max(num_gts, 1)`, a Python float counted from the
assignment, and the assignment itself is a per-ground-truth top-k with a data-dependent k whose
tie order a dense rewrite would not reproduce; the targets it builds have data-dependent lengths.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

KIND = "item-mask-topk"
GRAD = True


def bboxes_iou(bboxes_a, bboxes_b, xyxy=True):
    if bboxes_a.shape[1] != 4 or bboxes_b.shape[1] != 4:
        raise IndexError
    assert not xyxy, "only the (cx, cy, w, h) form is kept in this case"
    tl = torch.max(
        (bboxes_a[:, None, :2] - bboxes_a[:, None, 2:] / 2),
        (bboxes_b[:, :2] - bboxes_b[:, 2:] / 2),
    )
    br = torch.min(
        (bboxes_a[:, None, :2] + bboxes_a[:, None, 2:] / 2),
        (bboxes_b[:, :2] + bboxes_b[:, 2:] / 2),
    )
    area_a = torch.prod(bboxes_a[:, 2:], 1)
    area_b = torch.prod(bboxes_b[:, 2:], 1)
    en = (tl < br).type(tl.type()).prod(dim=2)
    area_i = torch.prod(br - tl, 2) * en
    return area_i / (area_a[:, None] + area_b - area_i)


class IOUloss(nn.Module):
    def __init__(self, reduction="none", loss_type="iou"):
        super().__init__()
        self.reduction = reduction
        self.loss_type = loss_type

    def forward(self, pred, target):
        assert pred.shape[0] == target.shape[0]
        pred = pred.view(-1, 4)
        target = target.view(-1, 4)
        tl = torch.max((pred[:, :2] - pred[:, 2:] / 2), (target[:, :2] - target[:, 2:] / 2))
        br = torch.min((pred[:, :2] + pred[:, 2:] / 2), (target[:, :2] + target[:, 2:] / 2))
        area_p = torch.prod(pred[:, 2:], 1)
        area_g = torch.prod(target[:, 2:], 1)
        en = (tl < br).type(tl.type()).prod(dim=1)
        area_i = torch.prod(br - tl, 1) * en
        area_u = area_p + area_g - area_i
        iou = (area_i) / (area_u + 1e-16)
        loss = 1 - iou ** 2
        if self.reduction == "mean":
            loss = loss.mean()
        elif self.reduction == "sum":
            loss = loss.sum()
        return loss


class YOLOXLoss(nn.Module):
    def __init__(self, num_classes, use_l1=True):
        super().__init__()
        self.num_classes = num_classes
        self.use_l1 = use_l1
        self.l1_loss = nn.L1Loss(reduction="none")
        self.bcewithlog_loss = nn.BCEWithLogitsLoss(reduction="none")
        self.iou_loss = IOUloss(reduction="none")

    def get_losses(self, imgs, x_shifts, y_shifts, expanded_strides, labels, outputs, origin_preds, dtype):
        bbox_preds = outputs[:, :, :4]  # [batch, n_anchors_all, 4]
        obj_preds = outputs[:, :, 4:5]  # [batch, n_anchors_all, 1]
        cls_preds = outputs[:, :, 5:]  # [batch, n_anchors_all, n_cls]

        # calculate targets
        nlabel = (labels.sum(dim=2) > 0).sum(dim=1)  # number of objects

        total_num_anchors = outputs.shape[1]
        x_shifts = torch.cat(x_shifts, 1)  # [1, n_anchors_all]
        y_shifts = torch.cat(y_shifts, 1)  # [1, n_anchors_all]
        expanded_strides = torch.cat(expanded_strides, 1)
        if self.use_l1:
            origin_preds = torch.cat(origin_preds, 1)

        cls_targets, reg_targets, l1_targets, obj_targets, fg_masks = [], [], [], [], []
        num_fg = 0.0
        num_gts = 0.0

        for batch_idx in range(outputs.shape[0]):
            num_gt = int(nlabel[batch_idx])
            num_gts += num_gt
            if num_gt == 0:
                cls_target = outputs.new_zeros((0, self.num_classes))
                reg_target = outputs.new_zeros((0, 4))
                l1_target = outputs.new_zeros((0, 4))
                obj_target = outputs.new_zeros((total_num_anchors, 1))
                fg_mask = outputs.new_zeros(total_num_anchors).bool()
            else:
                gt_bboxes_per_image = labels[batch_idx, :num_gt, 1:5]
                gt_classes = labels[batch_idx, :num_gt, 0]
                bboxes_preds_per_image = bbox_preds[batch_idx]

                (
                    gt_matched_classes,
                    fg_mask,
                    pred_ious_this_matching,
                    matched_gt_inds,
                    num_fg_img,
                ) = self.get_assignments(
                    batch_idx, num_gt, gt_bboxes_per_image, gt_classes, bboxes_preds_per_image,
                    expanded_strides, x_shifts, y_shifts, cls_preds, obj_preds,
                )
                num_fg += num_fg_img

                cls_target = F.one_hot(
                    gt_matched_classes.to(torch.int64), self.num_classes
                ) * pred_ious_this_matching.unsqueeze(-1)
                obj_target = fg_mask.unsqueeze(-1)
                reg_target = gt_bboxes_per_image[matched_gt_inds]
                if self.use_l1:
                    l1_target = self.get_l1_target(
                        outputs.new_zeros((num_fg_img, 4)),
                        gt_bboxes_per_image[matched_gt_inds],
                        expanded_strides[0][fg_mask],
                        x_shifts=x_shifts[0][fg_mask],
                        y_shifts=y_shifts[0][fg_mask],
                    )

            cls_targets.append(cls_target)
            reg_targets.append(reg_target)
            obj_targets.append(obj_target.to(dtype))
            fg_masks.append(fg_mask)
            if self.use_l1:
                l1_targets.append(l1_target)

        cls_targets = torch.cat(cls_targets, 0)
        reg_targets = torch.cat(reg_targets, 0)
        obj_targets = torch.cat(obj_targets, 0)
        fg_masks = torch.cat(fg_masks, 0)
        if self.use_l1:
            l1_targets = torch.cat(l1_targets, 0)

        num_fg = max(num_fg, 1)
        loss_iou = (self.iou_loss(bbox_preds.view(-1, 4)[fg_masks], reg_targets)).sum() / num_fg
        loss_obj = (self.bcewithlog_loss(obj_preds.view(-1, 1), obj_targets)).sum() / num_fg
        loss_cls = (
            self.bcewithlog_loss(cls_preds.view(-1, self.num_classes)[fg_masks], cls_targets)
        ).sum() / num_fg
        if self.use_l1:
            loss_l1 = (self.l1_loss(origin_preds.view(-1, 4)[fg_masks], l1_targets)).sum() / num_fg
        else:
            loss_l1 = 0.0

        reg_weight = 5.0
        loss = reg_weight * loss_iou + loss_obj + loss_cls + loss_l1

        return (loss, reg_weight * loss_iou, loss_obj, loss_cls, loss_l1, num_fg / max(num_gts, 1))

    def get_l1_target(self, l1_target, gt, stride, x_shifts, y_shifts, eps=1e-8):
        l1_target[:, 0] = gt[:, 0] / stride - x_shifts
        l1_target[:, 1] = gt[:, 1] / stride - y_shifts
        l1_target[:, 2] = torch.log(gt[:, 2] / stride + eps)
        l1_target[:, 3] = torch.log(gt[:, 3] / stride + eps)
        return l1_target

    @torch.no_grad()
    def get_assignments(self, batch_idx, num_gt, gt_bboxes_per_image, gt_classes, bboxes_preds_per_image,
                        expanded_strides, x_shifts, y_shifts, cls_preds, obj_preds):
        fg_mask, geometry_relation = self.get_geometry_constraint(
            gt_bboxes_per_image, expanded_strides, x_shifts, y_shifts,
        )

        bboxes_preds_per_image = bboxes_preds_per_image[fg_mask]
        cls_preds_ = cls_preds[batch_idx][fg_mask]
        obj_preds_ = obj_preds[batch_idx][fg_mask]
        num_in_boxes_anchor = bboxes_preds_per_image.shape[0]

        pair_wise_ious = bboxes_iou(gt_bboxes_per_image, bboxes_preds_per_image, False)
        gt_cls_per_image = F.one_hot(gt_classes.to(torch.int64), self.num_classes).float()
        pair_wise_ious_loss = -torch.log(pair_wise_ious + 1e-8)

        cls_preds_ = (cls_preds_.float().sigmoid_() * obj_preds_.float().sigmoid_()).sqrt()
        pair_wise_cls_loss = F.binary_cross_entropy(
            cls_preds_.unsqueeze(0).repeat(num_gt, 1, 1),
            gt_cls_per_image.unsqueeze(1).repeat(1, num_in_boxes_anchor, 1),
            reduction="none",
        ).sum(-1)

        cost = pair_wise_cls_loss + 3.0 * pair_wise_ious_loss + float(1e6) * (~geometry_relation)

        num_fg, gt_matched_classes, pred_ious_this_matching, matched_gt_inds = self.simota_matching(
            cost, pair_wise_ious, gt_classes, num_gt, fg_mask
        )
        return gt_matched_classes, fg_mask, pred_ious_this_matching, matched_gt_inds, num_fg

    def get_geometry_constraint(self, gt_bboxes_per_image, expanded_strides, x_shifts, y_shifts):
        expanded_strides_per_image = expanded_strides[0]
        x_centers_per_image = ((x_shifts[0] + 0.5) * expanded_strides_per_image).unsqueeze(0)
        y_centers_per_image = ((y_shifts[0] + 0.5) * expanded_strides_per_image).unsqueeze(0)

        # in fixed center
        center_radius = 1.5
        center_dist = expanded_strides_per_image.unsqueeze(0) * center_radius
        gt_bboxes_per_image_l = (gt_bboxes_per_image[:, 0:1]) - center_dist
        gt_bboxes_per_image_r = (gt_bboxes_per_image[:, 0:1]) + center_dist
        gt_bboxes_per_image_t = (gt_bboxes_per_image[:, 1:2]) - center_dist
        gt_bboxes_per_image_b = (gt_bboxes_per_image[:, 1:2]) + center_dist

        c_l = x_centers_per_image - gt_bboxes_per_image_l
        c_r = gt_bboxes_per_image_r - x_centers_per_image
        c_t = y_centers_per_image - gt_bboxes_per_image_t
        c_b = gt_bboxes_per_image_b - y_centers_per_image
        center_deltas = torch.stack([c_l, c_t, c_r, c_b], 2)
        is_in_centers = center_deltas.min(dim=-1).values > 0.0
        anchor_filter = is_in_centers.sum(dim=0) > 0
        geometry_relation = is_in_centers[:, anchor_filter]

        return anchor_filter, geometry_relation

    def simota_matching(self, cost, pair_wise_ious, gt_classes, num_gt, fg_mask):
        matching_matrix = torch.zeros_like(cost, dtype=torch.uint8)

        n_candidate_k = min(10, pair_wise_ious.size(1))
        topk_ious, _ = torch.topk(pair_wise_ious, n_candidate_k, dim=1)
        dynamic_ks = torch.clamp(topk_ious.sum(1).int(), min=1)
        for gt_idx in range(num_gt):
            _, pos_idx = torch.topk(
                cost[gt_idx], k=dynamic_ks[gt_idx], largest=False
            )
            matching_matrix[gt_idx][pos_idx] = 1

        del topk_ious, dynamic_ks, pos_idx

        anchor_matching_gt = matching_matrix.sum(0)
        # deal with the case that one anchor matches multiple ground-truths
        if anchor_matching_gt.max() > 1:
            multiple_match_mask = anchor_matching_gt > 1
            _, cost_argmin = torch.min(cost[:, multiple_match_mask], dim=0)
            matching_matrix[:, multiple_match_mask] *= 0
            matching_matrix[cost_argmin, multiple_match_mask] = 1
        fg_mask_inboxes = anchor_matching_gt > 0
        num_fg = fg_mask_inboxes.sum().item()

        fg_mask[fg_mask.clone()] = fg_mask_inboxes

        matched_gt_inds = matching_matrix[:, fg_mask_inboxes].argmax(0)
        gt_matched_classes = gt_classes[matched_gt_inds]

        pred_ious_this_matching = (matching_matrix * pair_wise_ious).sum(0)[
            fg_mask_inboxes
        ]
        return num_fg, gt_matched_classes, pred_ious_this_matching, matched_gt_inds


NUM_CLASSES = 3
STRIDES = (8, 16)
IMG = 32


def make():
    torch.manual_seed(0)
    return YOLOXLoss(NUM_CLASSES, use_l1=True).get_losses


def _grids():
    x_shifts, y_shifts, strides = [], [], []
    for s in STRIDES:
        n = IMG // s
        yv, xv = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
        x_shifts.append(xv.reshape(1, -1).float())
        y_shifts.append(yv.reshape(1, -1).float())
        strides.append(torch.full((1, n * n), float(s)))
    return x_shifts, y_shifts, strides


def _predictions(g, b):
    """Decoded head outputs (cx, cy, w, h in pixels, obj and class logits) and the raw box
    regressions the L1 term compares with."""
    x_shifts, y_shifts, strides = _grids()
    raw = [torch.randn(b, xs.shape[1], 4, generator=g) * 0.5 for xs in x_shifts]
    decoded = []
    for r, xs, ys, st in zip(raw, x_shifts, y_shifts, strides):
        xy = (r[..., :2] + torch.stack([xs, ys], -1)) * st[..., None]
        wh = torch.exp(r[..., 2:]) * st[..., None] * 2
        decoded.append(torch.cat([xy, wh], -1))
    n = sum(xs.shape[1] for xs in x_shifts)
    logits = torch.randn(b, n, 1 + NUM_CLASSES, generator=g)
    outputs = torch.cat([torch.cat(decoded, 1), logits], -1)
    return x_shifts, y_shifts, strides, outputs, raw


def _labels(boxes_per_image, max_gt=4):
    """YOLOX's padded targets: (B, max_gt, 5) rows of [class, cx, cy, w, h], zero rows after."""
    labels = torch.zeros(len(boxes_per_image), max_gt, 5)
    for i, boxes in enumerate(boxes_per_image):
        for j, box in enumerate(boxes):
            labels[i, j] = torch.tensor(box, dtype=torch.float32)
    return labels


def inputs():
    g = torch.Generator().manual_seed(21)
    out = []

    def case(*boxes_per_image):
        xs, ys, st, outputs, raw = _predictions(g, len(boxes_per_image))
        out.append((None, xs, ys, st, _labels(boxes_per_image), outputs, raw, torch.float32))

    case([[0, 10, 12, 8, 10]], [[1, 20, 20, 12, 9], [2, 6, 25, 5, 6]])
    case([[2, 16, 16, 20, 20], [1, 17, 15, 18, 22]])                     # two overlapping objects
    case([], [[0, 8, 8, 6, 6]])                                          # an image without objects
    case([], [])                                                         # no objects in the batch
    case([[0, 4, 4, 6, 6], [0, 28, 28, 6, 6], [1, 4, 28, 6, 6], [2, 28, 4, 6, 6]])
    case([[1, 16, 16, 30, 30]])                                          # one large object
    case([[0, 12, 12, 4, 4], [1, 13, 12, 4, 4], [2, 12, 13, 4, 4]])      # three nearly identical
    case([[2, 24, 8, 10, 14]], [[0, 9, 21, 7, 7], [1, 22, 22, 16, 8]], [[1, 16, 5, 28, 8]])
    return out
