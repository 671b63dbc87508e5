"""detectron2 Keypoint R-CNN loss: keypoint targets are rasterised into the proposal boxes'
heatmaps, invisible/out-of-box keypoints are dropped, and the spatial cross-entropy is normalised by
the number of visible keypoints (or a given normalizer); a batch with no visible keypoint is
skipped and counted in the event storage.

Source: https://github.com/facebookresearch/detectron2/blob/main/detectron2/modeling/roi_heads/keypoint_head.py
(`keypoint_rcnn_loss`) and
https://github.com/facebookresearch/detectron2/blob/main/detectron2/structures/keypoints.py
(`_keypoints_to_heatmap`, `Keypoints.to_heatmap`); `Instances`, `Boxes` and the event storage are
reduced to the attributes used.

Breaks: `valid = torch.nonzero(valid).squeeze(1)` (dynamic-shape operator); the test
`valid.numel() == 0` and the gathers `pred_keypoint_logits[valid]` / `keypoint_targets[valid]`
then run in the resumed frame.

HAND: masked loss over all keypoints: `torch.where(valid, F.cross_entropy(..., reduction="none"), 0).sum()`,
divided by the visible count (clamped to 1) or the normalizer, and
`torch.where(count == 0, pred_keypoint_logits.sum() * 0, loss)`; the skip counter and the
`put_scalar` call run at run time in a `torch.library.custom_op` with an ORDERED effect, only when
the count is zero, with the same values.
"""
import torch
from torch.nn import functional as F

KIND = "nonzero+branch"
GRAD = True

_TOTAL_SKIPPED = 0


class EventStorage:
    def __init__(self):
        self.history = []

    def put_scalar(self, name, value, smoothing_hint=True):
        self.history.append((name, float(value), smoothing_hint))


_STORAGE = EventStorage()


def get_event_storage():
    return _STORAGE


def cat(tensors, dim=0):
    assert isinstance(tensors, (list, tuple))
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim)


def _keypoints_to_heatmap(keypoints, rois, heatmap_size):
    if rois.numel() == 0:
        return rois.new().long(), rois.new().long()
    offset_x = rois[:, 0]
    offset_y = rois[:, 1]
    scale_x = heatmap_size / (rois[:, 2] - rois[:, 0])
    scale_y = heatmap_size / (rois[:, 3] - rois[:, 1])

    offset_x = offset_x[:, None]
    offset_y = offset_y[:, None]
    scale_x = scale_x[:, None]
    scale_y = scale_y[:, None]

    x = keypoints[..., 0]
    y = keypoints[..., 1]

    x_boundary_inds = x == rois[:, 2][:, None]
    y_boundary_inds = y == rois[:, 3][:, None]

    x = (x - offset_x) * scale_x
    x = x.floor().long()
    y = (y - offset_y) * scale_y
    y = y.floor().long()

    x[x_boundary_inds] = heatmap_size - 1
    y[y_boundary_inds] = heatmap_size - 1

    valid_loc = (x >= 0) & (y >= 0) & (x < heatmap_size) & (y < heatmap_size)
    vis = keypoints[..., 2] > 0
    valid = (valid_loc & vis).long()

    lin_ind = y * heatmap_size + x
    heatmaps = lin_ind * valid

    return heatmaps, valid


class Keypoints:
    def __init__(self, keypoints):
        self.tensor = keypoints

    def to_heatmap(self, boxes, heatmap_size):
        return _keypoints_to_heatmap(self.tensor, boxes, heatmap_size)


class Boxes:
    def __init__(self, tensor):
        self.tensor = tensor


class Instances:
    def __init__(self, proposal_boxes, gt_keypoints):
        self.proposal_boxes = Boxes(proposal_boxes)
        self.gt_keypoints = Keypoints(gt_keypoints)

    def __len__(self):
        return self.proposal_boxes.tensor.shape[0]


def keypoint_rcnn_loss(pred_keypoint_logits, instances, normalizer):
    heatmaps = []
    valid = []

    keypoint_side_len = pred_keypoint_logits.shape[2]
    for instances_per_image in instances:
        if len(instances_per_image) == 0:
            continue
        keypoints = instances_per_image.gt_keypoints
        heatmaps_per_image, valid_per_image = keypoints.to_heatmap(
            instances_per_image.proposal_boxes.tensor, keypoint_side_len
        )
        heatmaps.append(heatmaps_per_image.view(-1))
        valid.append(valid_per_image.view(-1))

    if len(heatmaps):
        keypoint_targets = cat(heatmaps, dim=0)
        valid = cat(valid, dim=0).to(dtype=torch.uint8)
        valid = torch.nonzero(valid).squeeze(1)

    # torch.mean (in binary_cross_entropy_with_logits) doesn't
    # accept empty tensors, so handle it separately
    if len(heatmaps) == 0 or valid.numel() == 0:
        global _TOTAL_SKIPPED
        _TOTAL_SKIPPED += 1
        storage = get_event_storage()
        storage.put_scalar("kpts_num_skipped_batches", _TOTAL_SKIPPED, smoothing_hint=False)
        return pred_keypoint_logits.sum() * 0

    N, K, H, W = pred_keypoint_logits.shape
    pred_keypoint_logits = pred_keypoint_logits.view(N * K, H * W)

    keypoint_loss = F.cross_entropy(
        pred_keypoint_logits[valid], keypoint_targets[valid], reduction="sum"
    )

    # If a normalizer isn't specified, normalize by the number of visible keypoints in the minibatch
    if normalizer is None:
        normalizer = valid.numel()
    keypoint_loss /= normalizer

    return keypoint_loss


class KeypointHeadLoss(torch.nn.Module):
    """A 1x1-conv keypoint head on RoI features followed by the Keypoint R-CNN loss."""

    def __init__(self, in_channels=3, num_keypoints=2):
        super().__init__()
        self.score = torch.nn.Conv2d(in_channels, num_keypoints, 1)

    def forward(self, roi_feats, proposal_boxes, gt_keypoints, normalizer=None):
        logits = self.score(roi_feats)
        instances = [Instances(b, k) for b, k in zip(proposal_boxes, gt_keypoints)]
        return keypoint_rcnn_loss(logits, instances, normalizer)


def make():
    torch.manual_seed(0)
    return KeypointHeadLoss()


def _image(g, n, vis_prob=0.7, boundary=False):
    xy0 = torch.rand(n, 2, generator=g) * 8
    wh = 2 + torch.rand(n, 2, generator=g) * 6
    boxes = torch.cat([xy0, xy0 + wh], dim=1)
    # keypoints mostly inside the box, some outside
    rel = torch.rand(n, 2, 2, generator=g) * 1.3 - 0.15
    kxy = boxes[:, None, :2] + rel * wh[:, None, :]
    if boundary and n > 0:
        kxy[0, 0, 0] = boxes[0, 2]  # exactly on the right border
        kxy[0, 1, 1] = boxes[0, 3]  # exactly on the bottom border
    vis = (torch.rand(n, 2, 1, generator=g) < vis_prob).float() * 2
    return boxes, torch.cat([kxy, vis], dim=-1)


def inputs():
    g = torch.Generator().manual_seed(7)
    out = []
    for counts, vis, boundary, normalizer in [
        ((2, 1), 0.8, True, None),
        ((1, 2), 0.8, False, 4.0),
        ((3,), 0.0, False, None),        # no visible keypoint: skipped batch
        ((0, 2), 0.9, True, None),
        ((2, 2), 0.5, False, None),
        ((1,), 1.0, True, 2.0),
        ((2, 0), 0.0, False, 3.0),       # skipped with a normalizer
        ((1, 1, 1), 0.7, False, None),
    ]:
        boxes, kps = zip(*[_image(g, n, vis, boundary) for n in counts])
        n_total = sum(counts)
        feats = torch.randn(n_total, 3, 4, 4, generator=g).requires_grad_()
        out.append((feats, list(boxes), list(kps), normalizer))
    return out
