"""CenterPoint / mmdet3d target heatmap: splat a 2D gaussian around an object's center into a
class heatmap, keeping the element-wise max with what is already there (modified in place).

Source: https://github.com/open-mmlab/mmdetection3d/blob/main/mmdet3d/models/utils/gaussian.py
        (gaussian_2d, draw_heatmap_gaussian; called from CenterHead.get_targets_single with
        `center_int = center.to(torch.int32)` and an int radius).

Breaks: `x, y = int(center[0]), int(center[1])` — converting a tensor element to a Python int
(the slice bounds of the window then depend on tensor values).

HAND: no Python ints from the center: build the gaussian over the whole map from the offsets
`arange(W) - cx`, `arange(H) - cy` (float64 like NumPy, with the same `eps * max` cut, then
float32), restrict it to the (2r+1)x(2r+1) window with a mask, and write
`where(window, maximum(heatmap, gaussian * k), heatmap)` back into the heatmap in place. Same values
for centers inside the map (the caller's documented domain: CenterHead skips centers outside it).
"""
import numpy as np
import torch
from torch import Tensor


def gaussian_2d(shape, sigma=1):
    """Generate gaussian map.

    Args:
        shape (Tuple[int]): Shape of the map.
        sigma (float): Sigma to generate gaussian map.
            Defaults to 1.

    Returns:
        np.ndarray: Generated gaussian map.
    """
    m, n = [(ss - 1.) / 2. for ss in shape]
    y, x = np.ogrid[-m:m + 1, -n:n + 1]

    h = np.exp(-(x * x + y * y) / (2 * sigma * sigma))
    h[h < np.finfo(h.dtype).eps * h.max()] = 0
    return h


def draw_heatmap_gaussian(heatmap: Tensor, center: Tensor, radius: int, k: int = 1) -> Tensor:
    """Get gaussian masked heatmap (no Python ints read from `center`)."""
    diameter = 2 * radius + 1
    sigma = diameter / 6

    # int() truncates toward zero, and so does .to(int64)
    c = center.to(torch.int64)

    height, width = heatmap.shape[0:2]
    dx = torch.arange(width, device=heatmap.device).view(1, -1) - c[0]
    dy = torch.arange(height, device=heatmap.device).view(-1, 1) - c[1]
    window = (dx.abs() <= radius) & (dy.abs() <= radius)

    # same float64 arithmetic as gaussian_2d: exp(-(x*x + y*y) / (2*sigma*sigma)), max == 1
    dxf = dx.to(torch.float64)
    dyf = dy.to(torch.float64)
    h = torch.exp(-(dxf * dxf + dyf * dyf) / (2 * sigma * sigma))
    h = torch.where(h < torch.finfo(torch.float64).eps * 1.0, torch.zeros_like(h), h)
    gaussian = h.to(heatmap.device, torch.float32)

    updated = torch.where(window, torch.maximum(heatmap, gaussian * k), heatmap)
    heatmap.copy_(updated)
    return heatmap


def make():
    return draw_heatmap_gaussian


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    cases = [
        ((16, 16), (8.0, 8.0), 2, 1),     # well inside
        ((16, 20), (0.4, 3.7), 3, 1),     # touches the left edge
        ((16, 20), (19.9, 15.2), 2, 1),   # bottom-right corner
        ((12, 12), (5.0, 0.0), 4, 1),     # top edge, big radius
        ((10, 14), (7.6, 4.2), 0, 1),     # radius 0: a single pixel
        ((16, 16), (3.3, 12.8), 1, 2),    # k = 2
        ((8, 8), (4.0, 4.0), 6, 1),       # window larger than the map
        ((16, 16), (10.0, 6.0), 3, 1),
    ]
    for i, (hw, c, r, k) in enumerate(cases):
        heat = torch.zeros(hw)
        if i % 2:  # an existing object nearby: keep the max
            heat = torch.rand(hw, generator=g) * 0.5
        center = torch.tensor(c, dtype=torch.float32)
        out.append((heat, center, r, k))
    # int32 center, as CenterHead passes it (`center.to(torch.int32)`)
    out.append((torch.rand(12, 12, generator=g) * 0.3, torch.tensor([6, 2], dtype=torch.int32), 2, 1))
    return out


KIND = "int"
