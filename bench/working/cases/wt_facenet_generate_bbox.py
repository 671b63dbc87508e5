"""facenet-pytorch MTCNN P-Net stage: generateBoundingBox (+ rerec) over the thresholded probability map.

Source: https://github.com/timesler/facenet-pytorch/blob/master/models/utils/detect_face.py
        (generateBoundingBox, rerec; called from detect_face for every image-pyramid scale)

Breaks: `mask.nonzero()` and the boolean-mask gathers `probs[mask]`, `reg[:, mask]` have
data-dependent output shapes (one row per cell above the threshold).

HAND: none — the function returns one box per above-threshold cell, so the output's first dimension
depends on the values of `probs`; no rewrite keeps the same outputs with static shapes.
"""
import torch

KIND = "nonzero / bool-mask gather"


def generateBoundingBox(reg, probs, scale, thresh):
    stride = 2
    cellsize = 12

    reg = reg.permute(1, 0, 2, 3)

    mask = probs >= thresh
    mask_inds = mask.nonzero()
    image_inds = mask_inds[:, 0]
    score = probs[mask]
    reg = reg[:, mask].permute(1, 0)
    bb = mask_inds[:, 1:].type(reg.dtype).flip(1)
    q1 = ((stride * bb + 1) / scale).floor()
    q2 = ((stride * bb + cellsize - 1 + 1) / scale).floor()
    boundingbox = torch.cat([q1, q2, score.unsqueeze(1), reg], dim=1)
    return boundingbox, image_inds


def rerec(bboxA):
    h = bboxA[:, 3] - bboxA[:, 1]
    w = bboxA[:, 2] - bboxA[:, 0]

    l = torch.max(w, h)
    bboxA[:, 0] = bboxA[:, 0] + w * 0.5 - l * 0.5
    bboxA[:, 1] = bboxA[:, 1] + h * 0.5 - l * 0.5
    bboxA[:, 2:4] = bboxA[:, :2] + l.repeat(2, 1).permute(1, 0)

    return bboxA


def pnet_stage(reg, probs, scale, thresh):
    boxes_scale, image_inds_scale = generateBoundingBox(reg, probs, scale, thresh)
    boxes_scale = rerec(boxes_scale)
    return boxes_scale, image_inds_scale


def make():
    return pnet_stage


def inputs():
    g = torch.Generator().manual_seed(0)

    def mk(n, h, w, scale, thresh, bias=0.0):
        reg = torch.randn(n, 4, h, w, generator=g) * 0.1
        probs = (torch.rand(n, h, w, generator=g) + bias).clamp(0, 1)
        return (reg, probs, scale, thresh)

    return [
        mk(2, 5, 6, 0.6, 0.6),
        mk(1, 4, 4, 1.0, 0.6),
        mk(2, 3, 3, 0.3, 0.95),
        mk(1, 6, 5, 0.42, 0.0),           # every cell kept
        mk(3, 4, 4, 0.7, 1.5),            # no cell kept: empty outputs
        mk(1, 5, 5, 0.5, 0.7, bias=0.2),
        mk(2, 2, 7, 0.8, 0.5),
        mk(1, 8, 8, 0.25, 0.9),
    ]
