"""AdaBins scale-invariant log loss on the valid-depth pixels.

Source: https://github.com/shariqfarooq123/AdaBins/blob/main/loss.py (`SILogLoss`), called from
https://github.com/shariqfarooq123/AdaBins/blob/main/train.py with `mask = depth > args.min_depth`.

Breaks: `input = input[mask]` / `target = target[mask]` (boolean-mask gathers: dynamic output shape)
before `torch.var` / `torch.mean`.

HAND: masked statistics over all pixels: n = mask.sum(), mean = sum(g * m) / n, unbiased variance
sum(((g - mean) * m)^2) / (n - 1); invalid pixels use a safe operand (`torch.where(mask, x, 1)`)
so that log(0) of an invalid target neither produces NaN values nor NaN gradients. The inputs keep
at least two valid pixels per batch (with fewer, `torch.var` warns and the loss is NaN).
"""

import torch
import torch.nn as nn

KIND = "mask-loss"
GRAD = True


class SILogLoss(nn.Module):  # Main loss function used in AdaBins paper
    def __init__(self):
        super(SILogLoss, self).__init__()
        self.name = 'SILog'

    def forward(self, input, target, mask=None, interpolate=True):
        if interpolate:
            input = nn.functional.interpolate(input, target.shape[-2:], mode='bilinear', align_corners=True)

        if mask is not None:
            input = input[mask]
            target = target[mask]
        g = torch.log(input) - torch.log(target)
        # n, c, h, w = g.shape
        # norm = 1/(h*w)
        # Dg = norm * torch.sum(g**2) - (0.85/(norm**2)) * (torch.sum(g))**2

        Dg = torch.var(g) + 0.15 * torch.pow(torch.mean(g), 2)
        return 10 * torch.sqrt(Dg)


def make():
    return SILogLoss()


def inputs():
    g = torch.Generator().manual_seed(11)
    min_depth = 1e-3
    out = []
    for b, h, w, hole in [(1, 8, 8, 0.3), (2, 6, 10, 0.0), (2, 8, 8, 0.6), (1, 4, 4, 0.9), (3, 6, 6, 0.2)]:
        pred = torch.rand(b, 1, h // 2, w // 2, generator=g) * 9 + 0.5
        depth = torch.rand(b, 1, h, w, generator=g) * 9 + 0.5
        depth[torch.rand(b, 1, h, w, generator=g) < hole] = 0.0   # missing depth
        depth[:, :, 0, :2] = 2.0                                   # at least two valid pixels
        out.append((pred, depth, depth > min_depth))
    pred = torch.rand(1, 1, 6, 6, generator=g) + 1
    depth = torch.rand(1, 1, 6, 6, generator=g) + 1
    out.append((pred, depth, depth > min_depth, False))            # same resolution, no interpolation
    out.append((pred, depth))                                       # no mask
    depth = torch.rand(2, 1, 6, 6, generator=g) * 3 + 1
    depth[:, :, :, 3:] = 0.0
    out.append((torch.rand(2, 1, 3, 3, generator=g) + 1, depth, depth > min_depth))
    return out
