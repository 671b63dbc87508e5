"""kornia's erosion-based Hausdorff loss for segmentation (`HausdorffERLoss`), the 2-D module.

Source: https://github.com/kornia/kornia/blob/main/kornia/losses/hausdorff.py
(`_HausdorffERLossBase.perform_erosion` / `.forward`, `HausdorffERLoss.forward`; itself refactored
from https://github.com/PatRyg99/HausdorffLoss/blob/master/hausdorff_loss.py).

Breaks: the target check of `HausdorffERLoss.forward` (`if not (target.max() < pred.size(1) and
target.min() >= 0 ...)`, a branch on tensor values), the base class's second check
`if pred.size(1) < target.max().item()`, and `if to_norm.any():` inside the erosion loop (a
data-dependent branch taken k times per class).

HAND: both target checks move into a `torch.library.custom_op` with an ORDERED effect that raises
the same ValueError (same text) at run time; the `to_norm.any()` branch is dropped, since the
`torch.where` under it already keeps `erosion` wherever `_to_norm` is false. The divisor of the
normalised erosion is `torch.where(to_norm.any(), max - min, 1)`: equal to the source's whenever the
branch is taken (a flat image in a batch normalised elsewhere still computes the source's 0/0 in
the unselected operand, with the same backward), and 1 when it is not (where the source never
divides, so no 0/0 may appear in the backward).
"""

from typing import Callable

import torch
from torch import nn

KIND = "branch-item-loop"
GRAD = True


class _HausdorffERLossBase(nn.Module):
    conv: Callable[..., torch.Tensor]
    max_pool: Callable[..., torch.Tensor]

    def __init__(self, alpha: float = 2.0, k: int = 10, reduction: str = "mean") -> None:
        super().__init__()
        self.alpha = alpha
        self.k = k
        self.reduction = reduction
        self.register_buffer("kernel", self.get_kernel())

    def get_kernel(self) -> torch.Tensor:
        """Get kernel for image morphology convolution."""
        raise NotImplementedError

    def perform_erosion(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        bound = (pred - target) ** 2

        kernel = torch.as_tensor(self.kernel, device=pred.device, dtype=pred.dtype)
        eroded = torch.zeros_like(bound, device=pred.device, dtype=pred.dtype)
        mask = torch.ones_like(bound, device=pred.device, dtype=torch.bool)

        # Same padding, assuming kernel is odd and square (cube) shaped.
        padding = (kernel.size(-1) - 1) // 2
        for k in range(self.k):
            # compute convolution with kernel
            dilation = self.conv(bound, weight=kernel, padding=padding, groups=1)
            # apply soft thresholding at 0.5 and F.normalize
            erosion = dilation - 0.5
            erosion[erosion < 0] = 0

            # image-wise differences for 2D images
            erosion_max = self.max_pool(erosion)
            erosion_min = -self.max_pool(-erosion)
            # No normalization needed if `max - min = 0`
            _to_norm = (erosion_max - erosion_min) != 0
            to_norm = _to_norm.squeeze()
            if to_norm.any():
                _erosion_to_fill = (erosion - erosion_min) / (erosion_max - erosion_min)
                erosion = torch.where(mask * _to_norm, _erosion_to_fill, erosion)

            # save erosion and add to loss
            eroded = eroded + erosion * (k + 1) ** self.alpha
            bound = erosion

        return eroded

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if not (pred.shape[2:] == target.shape[2:] and pred.size(0) == target.size(0) and target.size(1) == 1):
            raise ValueError(
                "Prediction and target need to be of same size, and target should not be one-hot."
                f"Got {pred.shape} and {target.shape}."
            )

        if pred.size(1) < target.max().item():
            raise ValueError("Invalid target value.")

        out = torch.stack(
            [
                self.perform_erosion(
                    pred[:, i : i + 1],
                    torch.where(
                        target == i,
                        torch.tensor(1, device=target.device, dtype=target.dtype),
                        torch.tensor(0, device=target.device, dtype=target.dtype),
                    ),
                )
                for i in range(pred.size(1))
            ]
        )

        if self.reduction == "mean":
            out = out.mean()
        elif self.reduction == "sum":
            out = out.sum()
        elif self.reduction == "none":
            pass
        else:
            raise NotImplementedError(f"reduction `{self.reduction}` has not been implemented yet.")

        return out


class HausdorffERLoss(_HausdorffERLossBase):
    conv = torch.conv2d
    max_pool = nn.AdaptiveMaxPool2d(1)

    def get_kernel(self) -> torch.Tensor:
        """Get kernel for image morphology convolution."""
        cross = torch.tensor([[[0, 1, 0], [1, 1, 1], [0, 1, 0]]])
        kernel = cross * 0.2
        return kernel[None]

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if pred.dim() != 4:
            raise ValueError(f"Only 2D images supported. Got {pred.dim()}.")

        if not (target.max() < pred.size(1) and target.min() >= 0 and target.dtype == torch.long):
            raise ValueError(
                f"Expect long type target value in range (0, {pred.size(1)}). ({target.min()}, {target.max()})"
            )
        return super().forward(pred, target)


def make():
    torch.manual_seed(0)
    return HausdorffERLoss(alpha=2.0, k=4)


def inputs():
    g = torch.Generator().manual_seed(3)

    def seg(b, c, h, w):
        pred = torch.rand(b, c, h, w, generator=g)
        target = torch.randint(0, c, (b, 1, h, w), generator=g)
        return pred, target

    out = [seg(2, 3, 8, 8), seg(1, 2, 6, 6), seg(3, 2, 5, 7)]
    # a perfect one-hot prediction: nothing to normalise in any iteration (the branch is not taken)
    t = torch.randint(0, 2, (2, 1, 6, 6), generator=g)
    out.append((torch.cat([(t == 0), (t == 1)], 1).float(), t))
    # one perfect image beside an imperfect one: normalised in a batch with a flat image
    p, t = seg(2, 2, 6, 6)
    p[0] = torch.cat([(t[0] == 0), (t[0] == 1)], 0).float()
    out.append((p, t))
    # a single class present everywhere
    out.append((torch.rand(1, 2, 6, 6, generator=g), torch.zeros(1, 1, 6, 6, dtype=torch.long)))
    # logits-like predictions outside [0, 1]
    p, t = seg(2, 4, 7, 7)
    out.append((p * 4 - 2, t))
    # tiny images (erosion goes flat after a few iterations)
    out.append(seg(2, 2, 3, 3))
    out.append((torch.zeros(1, 3, 5, 5), torch.zeros(1, 1, 5, 5, dtype=torch.long)))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(4)
    pred = torch.rand(1, 2, 5, 5, generator=g)
    return [
        (pred, torch.full((1, 1, 5, 5), 2, dtype=torch.long)),           # label == number of classes
        (pred, torch.randint(0, 2, (1, 1, 5, 5), generator=g) - 1),        # negative labels
        (pred, torch.randint(0, 2, (1, 1, 5, 5), generator=g).float()),    # float target
    ]
