"""torchvision Keypoint R-CNN inference post-processing: keypointrcnn_inference -> heatmaps_to_keypoints.

Source: https://github.com/pytorch/vision/blob/main/torchvision/models/detection/roi_heads.py
        (heatmaps_to_keypoints, keypointrcnn_inference)
Breaks: `roi_map_width = int(widths_ceil[i].item())` / `roi_map_height = int(heights_ceil[i].item())`
        inside the per-RoI loop: `.item()` on a data-dependent value (the box size) that then becomes the
        output size of F.interpolate. (The `torchvision._is_tracing()` ONNX branch is omitted: it is never
        taken outside tracing.)
HAND: none — each RoI's heatmap is resized to a size read from the box coordinates, so the intermediate
      shapes depend on tensor data; no static-shape rewrite computes the same bicubic resampling.
"""
import torch
import torch.nn.functional as F

KIND = "item() -> interpolate size"


def heatmaps_to_keypoints(maps, rois):
    """Extract predicted keypoint locations from heatmaps. Output has shape
    (#rois, 4, #keypoints) with the 4 rows corresponding to (x, y, logit, prob)
    for each keypoint.
    """
    # This function converts a discrete image coordinate in a HEATMAP_SIZE x
    # HEATMAP_SIZE image to a continuous keypoint coordinate. We maintain
    # consistency with keypoints_to_heatmap_labels by using the conversion from
    # Heckbert 1990: c = d + 0.5, where d is a discrete coordinate and c is a
    # continuous coordinate.
    offset_x = rois[:, 0]
    offset_y = rois[:, 1]

    widths = rois[:, 2] - rois[:, 0]
    heights = rois[:, 3] - rois[:, 1]
    widths = widths.clamp(min=1)
    heights = heights.clamp(min=1)
    widths_ceil = widths.ceil()
    heights_ceil = heights.ceil()

    num_keypoints = maps.shape[1]

    xy_preds = torch.zeros((len(rois), 3, num_keypoints), dtype=torch.float32, device=maps.device)
    end_scores = torch.zeros((len(rois), num_keypoints), dtype=torch.float32, device=maps.device)
    for i in range(len(rois)):
        roi_map_width = int(widths_ceil[i].item())
        roi_map_height = int(heights_ceil[i].item())
        width_correction = widths[i] / roi_map_width
        height_correction = heights[i] / roi_map_height
        roi_map = F.interpolate(
            maps[i][:, None], size=(roi_map_height, roi_map_width), mode="bicubic", align_corners=False
        )[:, 0]
        # roi_map_probs = scores_to_probs(roi_map.copy())
        w = roi_map.shape[2]
        pos = roi_map.reshape(num_keypoints, -1).argmax(dim=1)

        x_int = pos % w
        y_int = torch.div(pos - x_int, w, rounding_mode="floor")
        # assert (roi_map_probs[k, y_int, x_int] ==
        #         roi_map_probs[k, :, :].max())
        x = (x_int.float() + 0.5) * width_correction
        y = (y_int.float() + 0.5) * height_correction
        xy_preds[i, 0, :] = x + offset_x[i]
        xy_preds[i, 1, :] = y + offset_y[i]
        xy_preds[i, 2, :] = 1
        end_scores[i, :] = roi_map[torch.arange(num_keypoints, device=roi_map.device), y_int, x_int]

    return xy_preds.permute(0, 2, 1), end_scores


def keypointrcnn_inference(x, boxes):
    kp_probs = []
    kp_scores = []

    boxes_per_image = [box.size(0) for box in boxes]
    x2 = x.split(boxes_per_image, dim=0)

    for xx, bb in zip(x2, boxes):
        kp_prob, scores = heatmaps_to_keypoints(xx, bb)
        kp_probs.append(kp_prob)
        kp_scores.append(scores)

    return kp_probs, kp_scores


def make():
    return keypointrcnn_inference


def _boxes(g, n):
    xy = torch.rand(n, 2, generator=g) * 20
    wh = torch.rand(n, 2, generator=g) * 12 + 0.3  # some widths/heights below 1 hit the clamp
    return torch.cat([xy, xy + wh], 1)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for counts in [[1], [2], [1, 2], [3], [2, 1], [1, 1], [0, 2], [2, 2]]:
        boxes = [_boxes(g, c) for c in counts]
        x = torch.randn(sum(counts), 3, 6, 6, generator=g)
        out.append((x, boxes))
    return out
