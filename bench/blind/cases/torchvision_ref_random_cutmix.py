"""torchvision classification reference's RandomCutmix (batch-level CutMix used by the reference
training recipes): with probability p, paste a random box of the batch rolled by one into each
image and mix the one-hot targets by the pasted area.

Source: https://github.com/pytorch/vision/blob/main/references/classification/transforms.py
        (RandomCutmix.forward) and references/classification/train.py (applied to each batch).
Reduced: `F.get_dimensions` is inlined; the callable holds three configured instances
(p=0.5, p=0.5 in place, p=0.0 i.e. switched off) chosen by an argument, so that both outcomes of
the probability draw are reached from the harness's fixed RNG state.

Breaks: `if torch.rand(1).item() >= self.p:` (Tensor.item()),
`lambda_param = float(torch._sample_dirichlet(...)[0])`, `x1 = int(torch.clamp(r_x - r_w_half,
min=0))` and the three other box corners (tensor to Python int/float); the box then slices the batch.

HAND: everything stays on tensors: the box corners are 0-d int64 tensors (float64 arithmetic for
the Dirichlet draw, like Python floats, truncation like int()), the paste is a `torch.where` with a
box mask built from `arange` comparisons, the area ratio is float64, and the "not applied" outcome
is a `torch.where` on the draw (the random draws after it are made either way; their values only
matter when the batch is mixed). In place when `inplace=True` (`batch.copy_`).
"""
import math
from typing import Tuple

import torch
from torch import Tensor


def get_dimensions(img: Tensor):
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


class RandomCutmix(torch.nn.Module):
    """Randomly apply Cutmix to the provided batch and targets."""

    def __init__(self, num_classes: int, p: float = 0.5, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if num_classes < 1:
            raise ValueError("Please provide a valid positive value for the num_classes.")
        if alpha <= 0:
            raise ValueError("Alpha param can't be zero.")

        self.num_classes = num_classes
        self.p = p
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, batch: Tensor, target: Tensor) -> Tuple[Tensor, Tensor]:
        """
        Args:
            batch (Tensor): Float tensor of size (B, C, H, W)
            target (Tensor): Integer tensor of size (B, )

        Returns:
            Tensor: Randomly transformed batch.
        """
        if batch.ndim != 4:
            raise ValueError(f"Batch ndim should be 4. Got {batch.ndim}")
        if target.ndim != 1:
            raise ValueError(f"Target ndim should be 1. Got {target.ndim}")
        if not batch.is_floating_point():
            raise TypeError(f"Batch dtype should be a float tensor. Got {batch.dtype}.")
        if target.dtype != torch.int64:
            raise TypeError(f"Target dtype should be torch.int64. Got {target.dtype}")

        if not self.inplace:
            batch = batch.clone()
            target = target.clone()

        if target.ndim == 1:
            target = torch.nn.functional.one_hot(target, num_classes=self.num_classes).to(dtype=batch.dtype)

        if torch.rand(1).item() >= self.p:
            return batch, target

        # It's faster to roll the batch by one instead of shuffling it to create image pairs
        batch_rolled = batch.roll(1, 0)
        target_rolled = target.roll(1, 0)

        # Implemented as on cutmix paper, page 12 (with minor corrections on typos).
        lambda_param = float(torch._sample_dirichlet(torch.tensor([self.alpha, self.alpha]))[0])
        _, H, W = get_dimensions(batch)

        r_x = torch.randint(W, (1,))
        r_y = torch.randint(H, (1,))

        r = 0.5 * math.sqrt(1.0 - lambda_param)
        r_w_half = int(r * W)
        r_h_half = int(r * H)

        x1 = int(torch.clamp(r_x - r_w_half, min=0))
        y1 = int(torch.clamp(r_y - r_h_half, min=0))
        x2 = int(torch.clamp(r_x + r_w_half, max=W))
        y2 = int(torch.clamp(r_y + r_h_half, max=H))

        batch[:, :, y1:y2, x1:x2] = batch_rolled[:, :, y1:y2, x1:x2]
        lambda_param = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))

        target_rolled.mul_(1.0 - lambda_param)
        target.mul_(lambda_param).add_(target_rolled)

        return batch, target


class CutmixCollate(torch.nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.transforms = torch.nn.ModuleDict({
            "cutmix": RandomCutmix(num_classes, p=0.5, alpha=1.0),
            "cutmix_inplace": RandomCutmix(num_classes, p=0.5, alpha=0.5, inplace=True),
            "off": RandomCutmix(num_classes, p=0.0),
        })

    def forward(self, batch, target, mode="cutmix"):
        return self.transforms[mode](batch, target)


def make():
    return CutmixCollate()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for b, h, w, mode in [(2, 8, 8, "cutmix"), (3, 6, 10, "cutmix"), (4, 5, 5, "cutmix_inplace"),
                          (2, 8, 8, "off"), (1, 7, 9, "cutmix"), (3, 12, 4, "cutmix_inplace"),
                          (2, 3, 3, "off"), (5, 6, 6, "cutmix")]:
        out.append((torch.rand(b, 3, h, w, generator=g), torch.randint(0, 5, (b,), generator=g), mode))
    return out


def failing_inputs():
    return [(torch.rand(3, 4, 4), torch.tensor([0, 1, 2])),
            (torch.rand(2, 3, 4, 4), torch.tensor([0, 1], dtype=torch.int32))]


KIND = "item+int"
