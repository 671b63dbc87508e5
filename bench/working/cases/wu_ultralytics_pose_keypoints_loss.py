"""Ultralytics YOLO pose loss: keypoint location (OKS-style) and visibility losses of the anchors
assigned to a ground-truth object, with the ground-truth keypoints first scattered into a padded
(batch, max objects per image, K, 3) tensor.

Source: https://github.com/ultralytics/ultralytics/blob/main/ultralytics/utils/loss.py
(v8PoseLoss._select_target_keypoints, v8PoseLoss.calculate_keypoints_loss and KeypointLoss kept as
written; xyxy2xywh from https://github.com/ultralytics/ultralytics/blob/main/ultralytics/utils/ops.py;
the class is reduced to what these methods use; make() calls the method as v8PoseLoss.loss does,
with the assigner's boxes and the strides detached.)

Breaks: `max_kpts = torch.unique(batch_idx, return_counts=True)[1].max()` (dynamic output shape of
`torch.unique`, and its max then sizes `torch.zeros`); `if masks.any():` branches on the foreground
mask; inside the branch, `selected_keypoints[masks]`, `target_bboxes[masks]` and `pred_kpts[masks]`
are boolean-mask gathers (dynamic shapes).

HAND: partial — the padded tensor is sized by the number of ground-truth objects in the batch
(`len(batch_idx)`, a static bound on the per-image maximum; the gather only reads rows below each
image's count, so `selected_keypoints` is identical), and the keypoint losses are computed with
masked sums over all anchors instead of gathering the foreground ones (the mean over
(n_fg, K) becomes a masked sum divided by n_fg * K). `if masks.any():` stays: with no foreground
anchor the method returns the Python ints 0, 0 (and does not divide `target_bboxes` in place), which a
traced select cannot return.
"""
import torch
import torch.nn as nn


def empty_like(x):
    """Create empty torch.Tensor or np.ndarray with same shape as input and float32 dtype."""
    return torch.empty_like(x, dtype=torch.float32)


def xyxy2xywh(x):
    assert x.shape[-1] == 4, f"input shape last dimension expected 4 but input shape is {x.shape}"
    y = empty_like(x)  # faster than clone/copy
    y[..., 0] = (x[..., 0] + x[..., 2]) / 2  # x center
    y[..., 1] = (x[..., 1] + x[..., 3]) / 2  # y center
    y[..., 2] = x[..., 2] - x[..., 0]  # width
    y[..., 3] = x[..., 3] - x[..., 1]  # height
    return y


class KeypointLoss(nn.Module):
    """Criterion class for computing keypoint losses."""

    def __init__(self, sigmas: torch.Tensor) -> None:
        super().__init__()
        self.sigmas = sigmas

    def forward(self, pred_kpts, gt_kpts, kpt_mask, area):
        d = (pred_kpts[..., 0] - gt_kpts[..., 0]).pow(2) + (pred_kpts[..., 1] - gt_kpts[..., 1]).pow(2)
        kpt_loss_factor = kpt_mask.shape[1] / (torch.sum(kpt_mask != 0, dim=1) + 1e-9)
        # e = d / (2 * (area * self.sigmas) ** 2 + 1e-9)  # from formula
        e = d / ((2 * self.sigmas).pow(2) * (area + 1e-9) * 2)  # from cocoeval
        return (kpt_loss_factor.view(-1, 1) * ((1 - torch.exp(-e)) * kpt_mask)).mean()


class v8PoseLoss:
    def __init__(self, nkpt=4):
        self.bce_pose = nn.BCEWithLogitsLoss()
        sigmas = torch.ones(nkpt) / nkpt
        self.keypoint_loss = KeypointLoss(sigmas=sigmas)

    def _select_target_keypoints(self, keypoints, batch_idx, target_gt_idx, masks):
        batch_idx = batch_idx.flatten()
        batch_size = len(masks)

        # Find the maximum number of keypoints in a single image
        max_kpts = torch.unique(batch_idx, return_counts=True)[1].max()

        # Create a tensor to hold batched keypoints
        batched_keypoints = torch.zeros(
            (batch_size, max_kpts, keypoints.shape[1], keypoints.shape[2]), device=keypoints.device
        )

        # Vectorized fill: compute within-batch position for each keypoint using cumulative offsets
        batch_idx_long = batch_idx.long()
        offsets = torch.zeros(batch_size + 1, dtype=torch.long, device=keypoints.device)
        offsets.scatter_add_(0, batch_idx_long + 1, torch.ones_like(batch_idx_long))
        offsets = offsets.cumsum(0)
        within_idx = torch.arange(len(batch_idx), device=keypoints.device) - offsets[batch_idx_long]
        batched_keypoints[batch_idx_long, within_idx] = keypoints

        # Expand dimensions of target_gt_idx to match the shape of batched_keypoints
        target_gt_idx_expanded = target_gt_idx.unsqueeze(-1).unsqueeze(-1)

        # Use target_gt_idx_expanded to select keypoints from batched_keypoints
        selected_keypoints = batched_keypoints.gather(
            1, target_gt_idx_expanded.expand(-1, -1, keypoints.shape[1], keypoints.shape[2])
        )

        return selected_keypoints

    def calculate_keypoints_loss(
        self, masks, target_gt_idx, keypoints, batch_idx, stride_tensor, target_bboxes, pred_kpts
    ):
        # Select target keypoints using helper method
        selected_keypoints = self._select_target_keypoints(keypoints, batch_idx, target_gt_idx, masks)

        # Divide coordinates by stride
        selected_keypoints[..., :2] /= stride_tensor.view(1, -1, 1, 1)

        kpts_loss = 0
        kpts_obj_loss = 0

        if masks.any():
            target_bboxes /= stride_tensor
            gt_kpt = selected_keypoints[masks]
            area = xyxy2xywh(target_bboxes[masks])[:, 2:].prod(1, keepdim=True)
            pred_kpt = pred_kpts[masks]
            kpt_mask = gt_kpt[..., 2] != 0 if gt_kpt.shape[-1] == 3 else torch.full_like(gt_kpt[..., 0], True)
            kpts_loss = self.keypoint_loss(pred_kpt, gt_kpt, kpt_mask, area)  # pose loss

            if pred_kpt.shape[-1] == 3:
                kpts_obj_loss = self.bce_pose(pred_kpt[..., 2], kpt_mask.float())  # keypoint obj loss

        return kpts_loss, kpts_obj_loss


KIND = "dynamic-shape"
GRAD = True


def make():
    torch.manual_seed(0)
    criterion = v8PoseLoss(nkpt=4)

    def keypoint_losses(masks, target_gt_idx, keypoints, batch_idx, stride_tensor, target_bboxes, pred_kpts):
        # as v8PoseLoss.loss calls it: the assigner's boxes (computed under no_grad, divided in
        # place here) and the anchor strides carry no gradient
        return criterion.calculate_keypoints_loss(
            masks, target_gt_idx, keypoints, batch_idx, stride_tensor.detach(), target_bboxes.detach(), pred_kpts
        )

    return keypoint_losses


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    bs, n_anchors, K = 2, 6, 4
    stride_tensor = torch.tensor([[8.0], [8.0], [8.0], [16.0], [16.0], [32.0]])
    for k in range(9):
        counts = [1 + (k + i) % 3 for i in range(bs)]
        if k == 5:
            counts = [3, 0]  # an image without objects
        batch_idx = torch.cat([torch.full((c, 1), float(i)) for i, c in enumerate(counts)])
        n_obj = len(batch_idx)
        keypoints = torch.rand(n_obj, K, 3, generator=g) * 64
        keypoints[..., 2] = (torch.rand(n_obj, K, generator=g) < 0.7).float() * 2  # visibility 0/2
        masks = torch.rand(bs, n_anchors, generator=g) < 0.5
        if k in (2, 6):
            masks[:] = False  # no foreground anchor
        max_per_image = torch.tensor([max(c, 1) for c in counts])
        target_gt_idx = (torch.randint(0, 100, (bs, n_anchors), generator=g) % max_per_image[:, None])
        xy = torch.rand(bs, n_anchors, 2, generator=g) * 100
        wh = torch.rand(bs, n_anchors, 2, generator=g) * 60 + 4
        target_bboxes = torch.cat([xy, xy + wh], -1)
        pred_kpts = torch.randn(bs, n_anchors, K, 3, generator=g) * 4
        out.append((masks, target_gt_idx, keypoints, batch_idx, stride_tensor, target_bboxes, pred_kpts))
    return out
