"""torchvision.ops.masks_to_boxes: per-mask bounding boxes from torch.where over each mask.

The box-prompt step of a mask pipeline: instance masks -> xyxy boxes (torchvision's
``masks_to_boxes``, kept as in the source: a Python loop over the masks, ``torch.where(mask != 0)``
for the pixel coordinates, then min/max written into a preallocated float tensor), followed by a
small amount of box post-processing (areas, normalisation by the image size) as done by callers.

Source: https://github.com/pytorch/vision/blob/main/torchvision/ops/boxes.py (masks_to_boxes)

Breaks: ``torch.where(mask != 0)`` (one-argument where == nonzero) has a data-dependent output
shape, inside a Python loop over the masks.

HAND: the min/max coordinates are computed for all masks at once as masked reductions
(``torch.where(nz, xs, w).amin`` / ``torch.where(nz, xs, -1).amax``) over index grids; same values
for every non-empty mask (the documented input), same float dtype.
"""
import torch


def masks_to_boxes(masks: torch.Tensor) -> torch.Tensor:
    if masks.numel() == 0:
        return torch.zeros((0, 4), device=masks.device, dtype=torch.float)

    n = masks.shape[0]

    bounding_boxes = torch.zeros((n, 4), device=masks.device, dtype=torch.float)

    for index, mask in enumerate(masks):
        y, x = torch.where(mask != 0)

        bounding_boxes[index, 0] = torch.min(x)
        bounding_boxes[index, 1] = torch.min(y)
        bounding_boxes[index, 2] = torch.max(x)
        bounding_boxes[index, 3] = torch.max(y)

    return bounding_boxes


def boxes_from_masks(masks: torch.Tensor):
    h, w = masks.shape[-2:]
    boxes = masks_to_boxes(masks)
    areas = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)
    scale = torch.tensor([w, h, w, h], dtype=boxes.dtype)
    return boxes / scale, areas


def make():
    return boxes_from_masks


def _rect(n, h, w, boxes, dtype=torch.bool):
    m = torch.zeros(n, h, w, dtype=dtype)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        m[i, y0:y1 + 1, x0:x1 + 1] = 1
    return m


def inputs():
    g = torch.Generator().manual_seed(0)
    rnd = (torch.rand(3, 8, 10, generator=g) > 0.6)
    rnd[:, 4, 5] = True  # non-empty
    single = torch.zeros(2, 6, 6, dtype=torch.uint8)
    single[0, 2, 3] = 1
    single[1, 5, 0] = 255
    return [
        (_rect(1, 8, 8, [(1, 2, 5, 6)]),),
        (_rect(2, 8, 12, [(0, 0, 11, 7), (3, 1, 3, 1)]),),
        (_rect(3, 16, 16, [(2, 3, 9, 4), (0, 10, 15, 15), (7, 7, 8, 8)], torch.uint8),),
        (_rect(2, 5, 7, [(6, 4, 6, 4), (0, 0, 0, 0)], torch.float32),),
        (rnd,),
        (single,),
        (torch.ones(1, 4, 9, dtype=torch.bool),),
        (torch.zeros(0, 4, 4, dtype=torch.bool),),
        ((torch.randn(4, 6, 6, generator=g) > 1.0) | torch.eye(6, dtype=torch.bool),),
    ]


KIND = "dynamic-shape-loop"
