"""A product of two comparisons is a bool tensor (torchvision's `_loss_inter_union`:
`mask = (ykis2 > ykis1) * (xkis2 > xkis1)`), so indexing with it is a boolean-mask selection
(GM402); a comparison times a number is not a mask."""
import torch


@torch.compile
def f(x1, y1, x2, y2):
    mask = (y2 > y1) * (x2 > x1)
    inter = torch.zeros_like(x1)
    inter[mask] = x2[mask] - x1[mask]  # expect: GM402
    weights = (y2 > y1) * 2
    return inter, x1[weights]


def sample():
    return f, tuple(torch.randn(5) for _ in range(4)), {}
