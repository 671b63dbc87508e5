"""MONAI `rescale_array` — hand rewrite: no Python branch on `mina == maxa`.

Source: https://github.com/Project-MONAI/MONAI/blob/dev/monai/transforms/utils.py (rescale_array)

HAND: both results are computed and `torch.where(mina == maxa, ...)` selects; the denominator is
replaced by 1 where the image is constant, so the unselected branch is finite (values and gradients).
"""
import numpy as np
import torch

KIND = "data-dependent branch"
GRAD = True

_NP_TO_TORCH = {np.float32: torch.float32, np.float64: torch.float64}


def convert_data_type(arr, dtype=None):
    if dtype is not None:
        dtype = _NP_TO_TORCH.get(dtype, dtype)
        arr = arr.to(dtype)
    return arr, None, None


def rescale_array(arr, minv=0.0, maxv=1.0, dtype=np.float32):
    """Rescale the values of `arr` to be from `minv` to `maxv`."""
    if dtype is not None:
        arr, *_ = convert_data_type(arr, dtype=dtype)
    mina = arr.min()
    maxa = arr.max()
    constant = mina == maxa
    const_out = arr * minv if minv is not None else arr

    span = torch.where(constant, torch.ones_like(maxa), maxa - mina)
    norm = (arr - mina) / span  # normalize the array first
    if (minv is None) or (maxv is None):
        out = norm
    else:
        out = (norm * (maxv - minv)) + minv
    return torch.where(constant, const_out, out)


def make():
    return rescale_array


def inputs():
    torch.manual_seed(0)
    img = torch.randn(1, 4, 5)
    const = torch.full((1, 4, 5), 3.5)
    return [
        (img, 0.0, 1.0),
        (const, 0.0, 1.0),
        (const, None, 1.0),
        (const, 2.0, 5.0),
        (img, None, 1.0),
        (img, -1.0, None),
        (img, -1.0, 1.0, np.float64),
        (torch.randint(0, 255, (2, 3, 3)), 0.0, 1.0),
        (torch.full((2, 2), 7, dtype=torch.int64), 0.5, 1.0),
        (torch.randn(3, 3, dtype=torch.float64), 0.0, 10.0, None),
    ]
