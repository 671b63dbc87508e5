"""torchvision's Distance-IoU box regression loss (`torchvision.ops.distance_box_iou_loss`): the
intersection area of each predicted/target box pair is written into a zero tensor only where the
boxes overlap, via boolean-mask indexing, then IoU and the centre-distance penalty follow.

Source: https://github.com/pytorch/vision/pull/9518 ("Remove graph break in giou and diou losses":
"Indexing with a boolean mask causes a GPU to CPU sync which causes a graph break during
`torch.compile`"), code before the PR at
https://github.com/pytorch/vision/blob/main/torchvision/ops/_utils.py (`_loss_inter_union`,
`_upcast_non_float`) and
https://github.com/pytorch/vision/blob/main/torchvision/ops/diou_loss.py
(`distance_box_iou_loss`, `_diou_iou_loss`). Reduced: `_log_api_usage_once` is dropped; a few boxes.

Breaks: `intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])` in
`_loss_inter_union` (boolean-mask indexing: data-dependent output shape, aten.nonzero).

HAND: the masked write becomes `torch.where(mask, (xkis2 - xkis1) * (ykis2 - ykis1), 0)` on the
full tensors (same values where the mask holds, 0 elsewhere, same gradients: the products are finite
and get zero gradient where unselected); the site is removed.
"""
import torch

KIND = "mask-setitem"
GRAD = True


def _upcast_non_float(t: torch.Tensor) -> torch.Tensor:
    # Protects from numerical overflows in multiplications by upcasting to the equivalent higher type
    if t.dtype not in (torch.float32, torch.float64):
        return t.float()
    return t


def _loss_inter_union(
    boxes1: torch.Tensor,
    boxes2: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:

    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)

    # Intersection keypoints
    xkis1 = torch.max(x1, x1g)
    ykis1 = torch.max(y1, y1g)
    xkis2 = torch.min(x2, x2g)
    ykis2 = torch.min(y2, y2g)

    intsctk = torch.zeros_like(x1)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk

    return intsctk, unionk


def _diou_iou_loss(
    boxes1: torch.Tensor,
    boxes2: torch.Tensor,
    eps: float = 1e-7,
) -> tuple[torch.Tensor, torch.Tensor]:

    intsct, union = _loss_inter_union(boxes1, boxes2)
    iou = intsct / (union + eps)
    # smallest enclosing box
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xc1 = torch.min(x1, x1g)
    yc1 = torch.min(y1, y1g)
    xc2 = torch.max(x2, x2g)
    yc2 = torch.max(y2, y2g)
    # The diagonal distance of the smallest enclosing box squared
    diagonal_distance_squared = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
    # centers of boxes
    x_p = (x2 + x1) / 2
    y_p = (y2 + y1) / 2
    x_g = (x1g + x2g) / 2
    y_g = (y1g + y2g) / 2
    # The distance between boxes' centers squared.
    centers_distance_squared = ((x_p - x_g) ** 2) + ((y_p - y_g) ** 2)
    # The distance IoU is the IoU penalized by a normalized
    # distance between boxes' centers squared.
    loss = 1 - iou + (centers_distance_squared / diagonal_distance_squared)
    return loss, iou


def distance_box_iou_loss(
    boxes1: torch.Tensor,
    boxes2: torch.Tensor,
    reduction: str = "none",
    eps: float = 1e-7,
) -> torch.Tensor:
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)

    loss, _ = _diou_iou_loss(boxes1, boxes2, eps)

    # Check reduction option and return loss accordingly
    if reduction == "none":
        pass
    elif reduction == "mean":
        loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    elif reduction == "sum":
        loss = loss.sum()
    else:
        raise ValueError(
            f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'"
        )
    return loss


def make():
    return distance_box_iou_loss


def _boxes(g, n, scale=10.0):
    xy = torch.rand(n, 2, generator=g) * scale
    wh = torch.rand(n, 2, generator=g) * scale / 2 + 0.1
    return torch.cat([xy, xy + wh], dim=-1)


def inputs():
    g = torch.Generator().manual_seed(0)
    b = lambda n, scale=10.0: _boxes(g, n, scale)
    same = b(4)
    apart1 = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 2.0, 2.0]])
    apart2 = torch.tensor([[5.0, 5.0, 6.0, 7.0], [3.0, 0.0, 4.0, 2.0]])   # no overlap at all
    touch1 = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0]])
    touch2 = torch.tensor([[1.0, 0.0, 2.0, 1.0], [0.5, 0.5, 1.5, 1.5], [0.0, 3.0, 1.0, 4.0]])  # edge contact
    return [
        (b(5), b(5)),
        (b(6, 3.0), b(6, 3.0), "mean"),
        (same, same.clone(), "sum"),
        (apart1, apart2),
        (touch1, touch2, "mean"),
        (b(3).double(), b(3).double(), "sum"),
        (torch.tensor([[0, 0, 4, 4], [1, 1, 3, 5]]), torch.tensor([[2, 2, 6, 6], [8, 8, 9, 9]])),  # int boxes
        (torch.zeros(0, 4), torch.zeros(0, 4), "mean"),
        (b(4, 2.0)[0], b(4, 2.0)[1]),                                    # single boxes, shape [4]
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [(_boxes(g, 2), _boxes(g, 2), "max")]
