"""MMDetection MaxIoUAssigner: IoU-threshold anchor assignment with low-quality matches.

Source: https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/core/bbox/assigners/max_iou_assigner.py
(`MaxIoUAssigner.assign`, `MaxIoUAssigner.assign_wrt_overlaps`); `bbox_overlaps` reduced to plain IoU
(https://github.com/open-mmlab/mmdetection/blob/v2.28.2/mmdet/core/bbox/iou_calculators/iou2d_calculator.py),
`AssignResult` returned as a tuple.

Breaks: `assigned_gt_inds[pos_inds] = argmax_overlaps[pos_inds] + 1` (boolean-mask gather),
`if gt_max_overlaps[i] >= self.min_pos_iou:` (data-dependent branch in the per-gt loop),
after which the frame runs eagerly (`torch.nonzero(assigned_gt_inds > 0)` and `if pos_inds.numel() > 0:`
would break too).

HAND: element-wise `torch.where` for the threshold assignments; the low-quality loop vectorised
(the last gt i, in loop order, whose best IoU passes `min_pos_iou` and equals this anchor's IoU wins:
`(cond * arange(1, G + 1)[:, None]).max(0)`); labels gathered for every anchor with a clamped index
and kept where the anchor is positive.
"""

import torch

KIND = "assign-mask"


def bbox_overlaps(bboxes1, bboxes2, eps=1e-6):
    area1 = (bboxes1[..., 2] - bboxes1[..., 0]) * (bboxes1[..., 3] - bboxes1[..., 1])
    area2 = (bboxes2[..., 2] - bboxes2[..., 0]) * (bboxes2[..., 3] - bboxes2[..., 1])
    lt = torch.max(bboxes1[..., :, None, :2], bboxes2[..., None, :, :2])
    rb = torch.min(bboxes1[..., :, None, 2:], bboxes2[..., None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - overlap
    eps = union.new_tensor([eps])
    union = torch.max(union, eps)
    return overlap / union


class MaxIoUAssigner:
    def __init__(self, pos_iou_thr, neg_iou_thr, min_pos_iou=.0, gt_max_assign_all=True, match_low_quality=True):
        self.pos_iou_thr = pos_iou_thr
        self.neg_iou_thr = neg_iou_thr
        self.min_pos_iou = min_pos_iou
        self.gt_max_assign_all = gt_max_assign_all
        self.match_low_quality = match_low_quality

    def assign(self, bboxes, gt_bboxes, gt_labels=None):
        overlaps = bbox_overlaps(gt_bboxes, bboxes)
        return self.assign_wrt_overlaps(overlaps, gt_labels)

    def assign_wrt_overlaps(self, overlaps, gt_labels=None):
        num_gts, num_bboxes = overlaps.size(0), overlaps.size(1)

        # 1. assign -1 by default
        assigned_gt_inds = overlaps.new_full((num_bboxes, ), -1, dtype=torch.long)

        if num_gts == 0 or num_bboxes == 0:
            # No ground truth or boxes, return empty assignment
            max_overlaps = overlaps.new_zeros((num_bboxes, ))
            if num_gts == 0:
                # No truth, assign everything to background
                assigned_gt_inds[:] = 0
            if gt_labels is None:
                assigned_labels = None
            else:
                assigned_labels = overlaps.new_full((num_bboxes, ), -1, dtype=torch.long)
            return num_gts, assigned_gt_inds, max_overlaps, assigned_labels

        # for each anchor, which gt best overlaps with it
        # for each anchor, the max iou of all gts
        max_overlaps, argmax_overlaps = overlaps.max(dim=0)
        # for each gt, which anchor best overlaps with it
        # for each gt, the max iou of all proposals
        gt_max_overlaps, gt_argmax_overlaps = overlaps.max(dim=1)

        # 2. assign negative: below
        # the negative inds are set to be 0
        if isinstance(self.neg_iou_thr, float):
            assigned_gt_inds[(max_overlaps >= 0) & (max_overlaps < self.neg_iou_thr)] = 0
        elif isinstance(self.neg_iou_thr, tuple):
            assert len(self.neg_iou_thr) == 2
            assigned_gt_inds[(max_overlaps >= self.neg_iou_thr[0]) & (max_overlaps < self.neg_iou_thr[1])] = 0

        # 3. assign positive: above positive IoU threshold
        pos_inds = max_overlaps >= self.pos_iou_thr
        assigned_gt_inds[pos_inds] = argmax_overlaps[pos_inds] + 1

        if self.match_low_quality:
            # Low-quality matching will overwrite the assigned_gt_inds assigned
            # in Step 3. Thus, the assigned gt might not be the best one for
            # prediction.
            for i in range(num_gts):
                if gt_max_overlaps[i] >= self.min_pos_iou:
                    if self.gt_max_assign_all:
                        max_iou_inds = overlaps[i, :] == gt_max_overlaps[i]
                        assigned_gt_inds[max_iou_inds] = i + 1
                    else:
                        assigned_gt_inds[gt_argmax_overlaps[i]] = i + 1

        if gt_labels is not None:
            assigned_labels = assigned_gt_inds.new_full((num_bboxes, ), -1)
            pos_inds = torch.nonzero(assigned_gt_inds > 0, as_tuple=False).squeeze()
            if pos_inds.numel() > 0:
                assigned_labels[pos_inds] = gt_labels[assigned_gt_inds[pos_inds] - 1]
        else:
            assigned_labels = None

        return num_gts, assigned_gt_inds, max_overlaps, assigned_labels


def make():
    # RetinaNet-style thresholds
    return MaxIoUAssigner(pos_iou_thr=0.5, neg_iou_thr=0.4, min_pos_iou=0.1).assign


def _anchors():
    xs = torch.arange(4, dtype=torch.float) * 4
    x, y = torch.meshgrid(xs, xs, indexing="xy")
    ctr = torch.stack((x.flatten(), y.flatten()), -1) + 2
    return torch.cat((ctr - 3, ctr + 3), -1)  # 16 anchors of 6x6


def inputs():
    g = torch.Generator().manual_seed(10)
    anchors = _anchors()

    def gts(n, size=6.0):
        c = torch.rand(n, 2, generator=g) * 16
        wh = torch.rand(n, 2, generator=g) * size + 2
        return torch.cat((c - wh / 2, c + wh / 2), -1)

    out = [
        (anchors, gts(2), torch.tensor([1, 3])),
        (anchors, gts(3, 10.0), torch.tensor([0, 2, 2])),
        (anchors, anchors[[5]].clone(), torch.tensor([4])),          # a gt equal to an anchor
        (anchors, gts(1, 0.5), torch.tensor([7])),                  # tiny gt: only low-quality matches
        (anchors, gts(4), None),                                    # no labels
        (anchors, torch.tensor([[40.0, 40.0, 44.0, 44.0]]), torch.tensor([1])),  # gt outside: no overlap at all
        (anchors, torch.zeros(0, 4), torch.zeros(0, dtype=torch.long)),          # no gt
        (anchors, gts(5, 12.0), torch.tensor([1, 2, 3, 4, 5])),
        (anchors[:1], gts(2), torch.tensor([2, 6])),                # a single anchor
    ]
    return out
