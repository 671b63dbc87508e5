"""`np.random.randint(..., size=count)` draws one number when `count` is None (timm's
`rand_bbox(img_shape, lam, count=None)`, called without a count): dynamo cannot trace it (GM309),
as with no size; with a size given it traces the draw as a tensor op."""
import numpy as np
import torch


def rand_bbox(img_shape, count=None):
    img_h = img_shape[-1]
    return np.random.randint(0, img_h, size=count)  # expect: GM309


@torch.compile
def f(x):
    cy = rand_bbox(x.shape)
    return x * 2, cy


def sample():
    return f, (torch.randn(2, 6),), {}
