"""Hand rewrite of wu_ultralytics_pose_keypoints_loss (partial: `if masks.any():` stays)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


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
    """Criterion class for computing keypoint losses (masked over all anchors)."""

    def __init__(self, sigmas: torch.Tensor) -> None:
        super().__init__()
        self.sigmas = sigmas

    def forward(self, pred_kpts, gt_kpts, kpt_mask, area, fg, n_fg):
        d = (pred_kpts[..., 0] - gt_kpts[..., 0]).pow(2) + (pred_kpts[..., 1] - gt_kpts[..., 1]).pow(2)
        kpt_loss_factor = kpt_mask.shape[-1] / (torch.sum(kpt_mask != 0, dim=-1) + 1e-9)
        e = d / ((2 * self.sigmas).pow(2) * (area + 1e-9) * 2)  # from cocoeval
        per = kpt_loss_factor.unsqueeze(-1) * ((1 - torch.exp(-e)) * kpt_mask)
        per = torch.where(fg.unsqueeze(-1), per, torch.zeros_like(per))
        return per.sum() / (n_fg * kpt_mask.shape[-1])


class v8PoseLoss:
    def __init__(self, nkpt=4):
        self.keypoint_loss = KeypointLoss(sigmas=torch.ones(nkpt) / nkpt)

    def _select_target_keypoints(self, keypoints, batch_idx, target_gt_idx, masks):
        batch_idx = batch_idx.flatten()
        batch_size = len(masks)

        # every image has at most len(batch_idx) objects: a static bound instead of the
        # per-image maximum (the gather below reads only rows below each image's count)
        batched_keypoints = torch.zeros(
            (batch_size, len(batch_idx), keypoints.shape[1], keypoints.shape[2]), device=keypoints.device
        )

        batch_idx_long = batch_idx.long()
        offsets = torch.zeros(batch_size + 1, dtype=torch.long, device=keypoints.device)
        offsets.scatter_add_(0, batch_idx_long + 1, torch.ones_like(batch_idx_long))
        offsets = offsets.cumsum(0)
        within_idx = torch.arange(len(batch_idx), device=keypoints.device) - offsets[batch_idx_long]
        batched_keypoints[batch_idx_long, within_idx] = keypoints

        target_gt_idx_expanded = target_gt_idx.unsqueeze(-1).unsqueeze(-1)
        selected_keypoints = batched_keypoints.gather(
            1, target_gt_idx_expanded.expand(-1, -1, keypoints.shape[1], keypoints.shape[2])
        )
        return selected_keypoints

    def calculate_keypoints_loss(
        self, masks, target_gt_idx, keypoints, batch_idx, stride_tensor, target_bboxes, pred_kpts
    ):
        selected_keypoints = self._select_target_keypoints(keypoints, batch_idx, target_gt_idx, masks)
        selected_keypoints[..., :2] /= stride_tensor.view(1, -1, 1, 1)

        kpts_loss = 0
        kpts_obj_loss = 0

        if masks.any():
            target_bboxes /= stride_tensor
            n_fg = masks.sum()
            gt_kpt = selected_keypoints
            area = xyxy2xywh(target_bboxes)[..., 2:].prod(-1, keepdim=True)
            kpt_mask = gt_kpt[..., 2] != 0 if gt_kpt.shape[-1] == 3 else torch.full_like(gt_kpt[..., 0], True)
            kpts_loss = self.keypoint_loss(pred_kpts, gt_kpt, kpt_mask, area, masks, n_fg)

            if pred_kpts.shape[-1] == 3:
                bce = F.binary_cross_entropy_with_logits(pred_kpts[..., 2], kpt_mask.float(), reduction="none")
                bce = torch.where(masks.unsqueeze(-1), bce, torch.zeros_like(bce))
                kpts_obj_loss = bce.sum() / (n_fg * kpt_mask.shape[-1])

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
