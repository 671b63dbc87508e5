"""Hand rewrite of ds_adabins_silog_mask: masked mean and unbiased variance with safe operands."""

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
            m = mask.to(input.dtype)
            safe_input = torch.where(mask, input, torch.ones_like(input))
            safe_target = torch.where(mask, target, torch.ones_like(target))
            g = (torch.log(safe_input) - torch.log(safe_target)) * m
            n = m.sum()
            mean = g.sum() / n
            var = (((g - mean) * m) ** 2).sum() / (n - 1)
            Dg = var + 0.15 * torch.pow(mean, 2)
            return 10 * torch.sqrt(Dg)
        g = torch.log(input) - torch.log(target)

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
