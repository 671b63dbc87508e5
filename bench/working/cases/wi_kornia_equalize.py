"""Kornia's `equalize` (PIL-style histogram equalization of a float image in [0, 1], used by its
augmentation `RandomEqualize` / `kornia.augmentation.auto` policies): per image and per channel,
`_scale_channel` checks the value range with `.item()`, builds a 256-bin histogram, keeps the
non-empty bins with a boolean mask to find the step, and returns the channel unchanged when the step
is 0, otherwise maps it through a lookup table.

Source: https://github.com/kornia/kornia/blob/3687a5480005d44cac64e37e1c0a3ddf7764bc69/kornia/enhance/adjust.py
(`_build_lut`, `_scale_channel`, `equalize`), `_torch_histc_cast` from
https://github.com/kornia/kornia/blob/3687a5480005d44cac64e37e1c0a3ddf7764bc69/kornia/utils/helpers.py and
`perform_keep_shape_image` / `_to_bchw` from kornia/utils/image.py (same commit). Kornia's `Tensor`
alias is `torch.Tensor`. Tiny shapes: 1-2 images, 1-3 channels, 4x4 to 20x20 pixels (a step > 0
needs at least 256 pixels outside the last non-empty bin).

Breaks: `min_.item() < 0.0` and `max_.item() > 1.0` (`Tensor.item()`), `histo[histo != 0]` (boolean
mask: data-dependent output shape) and `if step == 0:` (data-dependent branch), once per
(image, channel).

HAND: the range checks move into a `torch.library.custom_op` with an ORDERED effect that raises the
same ValueError with the same text at run time; the sum of the non-empty bins is the sum of the whole
histogram and the last non-empty bin is found with `argmax` over `arange(256) * (histo != 0)`; both
outcomes of `step == 0` are computed (the lookup table with a safe divisor) and selected with
`torch.where`.
"""
from functools import wraps
from typing import Any, Callable, Union

import torch
from torch import Tensor

KIND = "item+dynamic-shape+branch"


def _torch_histc_cast(input: Tensor, bins: int, min: int, max: int) -> Tensor:
    """Helper function to make torch.histc work with other than fp32/64."""
    if not isinstance(input, Tensor):
        raise AssertionError(f"Input must be Tensor. Got: {type(input)}.")
    dtype: torch.dtype = input.dtype
    if dtype not in (torch.float32, torch.float64):
        dtype = torch.float32
    return torch.histc(input.to(dtype), bins, min, max).to(input.dtype)


def _to_bchw(tensor: Tensor) -> Tensor:
    """Convert a PyTorch tensor image to BCHW format."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Input type is not a Tensor. Got {type(tensor)}")

    if len(tensor.shape) < 2:
        raise ValueError(f"Input size must be a two, three or four dimensional tensor. Got {tensor.shape}")

    if len(tensor.shape) == 2:
        tensor = tensor.unsqueeze(0)

    if len(tensor.shape) == 3:
        tensor = tensor.unsqueeze(0)

    if len(tensor.shape) > 4:
        tensor = tensor.view(-1, tensor.shape[-3], tensor.shape[-2], tensor.shape[-1])

    return tensor


def perform_keep_shape_image(f: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """A decorator that enable `f` to be applied to an image of arbitrary leading dimensions `(*, C, H, W)`."""

    @wraps(f)
    def _wrapper(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(f"Input input type is not a Tensor. Got {type(input)}")

        if input.shape.numel() == 0:
            raise ValueError("Invalid input tensor, it is empty.")

        input_shape = input.shape
        input = _to_bchw(input)  # view input as (B, C, H, W)
        output = f(input, *args, **kwargs)
        if len(input_shape) == 3:
            output = output[0]

        if len(input_shape) == 2:
            output = output[0, 0]

        if len(input_shape) > 4:
            output = output.view(*(input_shape[:-3] + output.shape[-3:]))

        return output

    return _wrapper


def _build_lut(histo: Tensor, step: Tensor) -> Tensor:
    # Compute the cumulative sum, shifting by step // 2
    # and then normalization by step.
    step_trunc = torch.div(step, 2, rounding_mode="trunc")
    lut = torch.div(torch.cumsum(histo, 0) + step_trunc, step, rounding_mode="trunc")
    # Shift lut, prepending with 0.
    lut = torch.cat([torch.zeros(1, device=lut.device, dtype=lut.dtype), lut[:-1]])
    # Clip the counts to be in range.  This is done
    # in the C code for image.point.
    return torch.clamp(lut, 0, 255)


# Code taken from: https://github.com/pytorch/vision/pull/796
def _scale_channel(im: Tensor) -> Tensor:
    r"""Scale the data in the channel to implement equalize."""
    min_ = im.min()
    max_ = im.max()

    if min_.item() < 0.0 and not torch.isclose(min_, torch.as_tensor(0.0, dtype=min_.dtype)):
        raise ValueError(f"Values in the input tensor must greater or equal to 0.0. Found {min_.item()}.")

    if max_.item() > 1.0 and not torch.isclose(max_, torch.as_tensor(1.0, dtype=max_.dtype)):
        raise ValueError(f"Values in the input tensor must lower or equal to 1.0. Found {max_.item()}.")

    ndims = len(im.shape)
    if ndims not in (2, 3):
        raise TypeError(f"Input tensor must have 2 or 3 dimensions. Found {ndims}.")

    im = im * 255.0
    # Compute the histogram of the image channel.
    histo = _torch_histc_cast(im, bins=256, min=0, max=255)
    # For the purposes of computing the step, filter out the nonzeros.
    nonzero_histo = torch.reshape(histo[histo != 0], [-1])
    step = torch.div(torch.sum(nonzero_histo) - nonzero_histo[-1], 255, rounding_mode="trunc")

    # If step is zero, return the original image.  Otherwise, build
    # lut from the full histogram and step and then index from it.
    if step == 0:
        result = im
    else:
        # can't index using 2d index. Have to flatten and then reshape
        result = torch.gather(_build_lut(histo, step), 0, im.flatten().long())
        result = result.reshape_as(im)

    return result / 255.0


@perform_keep_shape_image
def equalize(input: Tensor) -> Tensor:
    r"""Apply equalize on the input tensor."""
    res = []
    for image in input:
        # Assumes RGB for now.  Scales each channel independently
        # and then stacks the result.
        scaled_image = torch.stack([_scale_channel(image[i, :, :]) for i in range(len(image))])
        res.append(scaled_image)
    return torch.stack(res)


def make():
    return equalize


def _levels(g, shape, n_levels, lo=0.0, hi=1.0):
    """an image whose pixels take n_levels distinct grey values in [lo, hi]"""
    levels = torch.linspace(lo, hi, n_levels)
    return levels[torch.randint(0, n_levels, shape, generator=g)]


def inputs():
    g = torch.Generator().manual_seed(5)
    dark = torch.rand(1, 1, 20, 20, generator=g) * 0.3
    dark[0, 0, 0, :3] = torch.tensor([0.6, 0.8, 1.0])
    return [
        (torch.rand(1, 3, 20, 20, generator=g),),                 # step > 0 on every channel
        (torch.rand(2, 1, 4, 4, generator=g),),                   # 16 pixels: step == 0
        (_levels(g, (1, 2, 20, 20), 8),),                         # few levels, step > 0
        (torch.full((1, 1, 18, 18), 0.5),),                       # constant: one non-empty bin, step 0
        (torch.cat([torch.rand(1, 1, 20, 20, generator=g),        # one channel each way
                    torch.full((1, 1, 20, 20), 0.25)], 1),),
        (torch.rand(3, 18, 18, generator=g),),                    # (C, H, W) input
        (dark,),                                                  # a dark image is stretched
        (torch.rand(2, 2, 16, 16, generator=g),),                 # exactly 256 pixels: step 0 or 1
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(6)
    return [
        (torch.rand(1, 1, 4, 4, generator=g) - 0.5,),             # below 0: ValueError
        (torch.rand(1, 2, 4, 4, generator=g) * 2.0,),             # above 1: ValueError
    ]
