"""Hand rewrite of torchvision_masks_to_boxes: masked min/max reductions instead of torch.where(mask)."""
import torch


def masks_to_boxes(masks: torch.Tensor) -> torch.Tensor:
    if masks.numel() == 0:
        return torch.zeros((0, 4), device=masks.device, dtype=torch.float)

    n, h, w = masks.shape
    nz = masks != 0
    ys = torch.arange(h, device=masks.device).view(1, h, 1).expand(n, h, w)
    xs = torch.arange(w, device=masks.device).view(1, 1, w).expand(n, h, w)
    x_min = torch.where(nz, xs, w).flatten(1).amin(1)
    y_min = torch.where(nz, ys, h).flatten(1).amin(1)
    x_max = torch.where(nz, xs, -1).flatten(1).amax(1)
    y_max = torch.where(nz, ys, -1).flatten(1).amax(1)
    return torch.stack([x_min, y_min, x_max, y_max], dim=1).to(torch.float)


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
