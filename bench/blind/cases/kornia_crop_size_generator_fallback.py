"""Kornia's RandomResizedCrop parameter generator: sample 10 (area, aspect-ratio) trials per image,
take the first valid one, and fall back to a center crop for images with no valid trial.

Source: https://github.com/kornia/kornia/blob/v0.5.0/kornia/augmentation/random_generator/random_generator.py
        (random_crop_size_generator, kornia 0.5.x) with its helpers from
        kornia/augmentation/utils/param_validation.py (_joint_range_check, _common_param_check)
        and kornia/augmentation/utils/helpers.py (_adapted_uniform, _extract_device_dtype).

Breaks: `_joint_range_check`: `if not bounds[0] <= ranged_factor[0] or not bounds[1] >= ranged_factor[1]`
and `if not bounds[0] <= ranged_factor[0] <= ranged_factor[1] <= bounds[1]` (branches on tensor
values, for scale and for ratio); `if not cond_bool.all():` and `if in_ratio < ratio.min():` /
`elif in_ratio > ratio.min():` (branches on tensor values).

HAND: the range checks move into a `torch.library.custom_op` with an ORDERED effect that raises the
same ValueError (same text, with the tensor's repr) at run time; the fallback is computed always and
applied with `where(cond_bool, ...)` (which keeps every row when all are valid), and the three
center-crop sizes are chosen with `torch.where` on `in_ratio < ratio.min()` / `> ratio.min()`.
"""
from typing import Dict, Optional, Tuple, Union

import torch
from torch.distributions import Uniform


def _common_param_check(batch_size: int, same_on_batch: Optional[bool] = None):
    assert isinstance(batch_size, (int,)) and batch_size >= 0, f"`batch_size` shall be a positive integer. Got {batch_size}."
    if same_on_batch is not None:
        assert isinstance(same_on_batch, (bool,)), f"`same_on_batch` shall be boolean. Got {same_on_batch}."


def _joint_range_check(ranged_factor: torch.Tensor, name: str, bounds: Optional[Tuple[float, float]] = None) -> None:
    """check if bounds[0] <= ranged_factor[0] <= ranged_factor[1] <= bounds[1]"""
    if bounds is None:
        bounds = (float('-inf'), float('inf'))
    if ranged_factor.dim() == 1 and len(ranged_factor) == 2:
        if not bounds[0] <= ranged_factor[0] or not bounds[1] >= ranged_factor[1]:
            raise ValueError(f"{name} out of bounds. Expected inside {bounds}, got {ranged_factor}.")

        if not bounds[0] <= ranged_factor[0] <= ranged_factor[1] <= bounds[1]:
            raise ValueError(f"{name}[0] should be smaller than {name}[1] got {ranged_factor}")
    else:
        raise TypeError(
            f"{name} should be a tensor with length 2 whose values between {bounds}. " f"Got {ranged_factor}."
        )


def _extract_device_dtype(tensor_list):
    device, dtype = None, None
    for tensor in tensor_list:
        if tensor is not None:
            if not isinstance(tensor, (torch.Tensor,)):
                continue
            _device = tensor.device
            _dtype = tensor.dtype
            if device is None and dtype is None:
                device = _device
                dtype = _dtype
            elif device != _device or dtype != _dtype:
                raise ValueError(
                    f'Passed values are not in the same device and dtype.Got ({device}, {dtype}) and ({_device}, {_dtype}).'
                )
    if device is None:
        device = torch.device('cpu')
    if dtype is None:
        dtype = torch.get_default_dtype()
    return device, dtype


def _adapted_uniform(shape: Union[Tuple, torch.Size], low, high, same_on_batch=False) -> torch.Tensor:
    r""" The uniform function that accepts 'same_on_batch'.
    If same_on_batch is True, all values generated will be exactly same given a batch_size (shape[0]).
    By default, same_on_batch is set to False.
    """
    if not isinstance(low, torch.Tensor):
        low = torch.tensor(low).float()
    if not isinstance(high, torch.Tensor):
        high = torch.tensor(high).float()
    dist = Uniform(low, high)
    if same_on_batch:
        return dist.rsample((1, *shape[1:])).repeat(shape[0], *[1] * (len(shape) - 1))
    else:
        return dist.rsample(shape)


def random_crop_size_generator(
    batch_size: int,
    size: Tuple[int, int],
    scale: torch.Tensor,
    ratio: torch.Tensor,
    same_on_batch: bool = False,
    device: torch.device = torch.device('cpu'),
    dtype: torch.dtype = torch.float32,
) -> Dict[str, torch.Tensor]:
    r"""Get cropping heights and widths for ```crop``` transformation for resized crop transform."""
    _common_param_check(batch_size, same_on_batch)
    _joint_range_check(scale, "scale")
    _joint_range_check(ratio, "ratio")
    assert (
        len(size) == 2 and type(size[0]) is int and size[1] > 0 and type(size[1]) is int and size[1] > 0
    ), f"'height' and 'width' must be integers. Got {size}."

    _device, _dtype = _extract_device_dtype([scale, ratio])

    if batch_size == 0:
        return dict(size=torch.zeros([0, 2], device=_device, dtype=_dtype))

    scale = scale.to(device=device, dtype=dtype)
    ratio = ratio.to(device=device, dtype=dtype)
    # 10 trails for each element
    area = _adapted_uniform((batch_size, 10), scale[0] * size[0] * size[1], scale[1] * size[0] * size[1], same_on_batch)
    log_ratio = _adapted_uniform((batch_size, 10), torch.log(ratio[0]), torch.log(ratio[1]), same_on_batch)
    aspect_ratio = torch.exp(log_ratio)

    w = torch.sqrt(area * aspect_ratio).round().floor()
    h = torch.sqrt(area / aspect_ratio).round().floor()
    # Element-wise w, h condition
    cond = ((0 < w) * (w < size[0]) * (0 < h) * (h < size[1])).int()

    # torch.argmax is not reproducible accross devices: https://github.com/pytorch/pytorch/issues/17738
    # Here, we will select the first occurance of the duplicated elements.
    cond_bool, argmax_dim1 = ((cond.cumsum(1) == 1) & cond.bool()).max(1)
    h_out = w[torch.arange(0, batch_size, device=device, dtype=torch.long), argmax_dim1]
    w_out = h[torch.arange(0, batch_size, device=device, dtype=torch.long), argmax_dim1]

    if not cond_bool.all():
        # Fallback to center crop
        in_ratio = float(size[0]) / float(size[1])
        if in_ratio < ratio.min():
            h_ct = torch.tensor(size[0], device=device, dtype=dtype)
            w_ct = torch.round(h_ct / ratio.min())
        elif in_ratio > ratio.min():
            w_ct = torch.tensor(size[1], device=device, dtype=dtype)
            h_ct = torch.round(w_ct * ratio.min())
        else:  # whole image
            h_ct = torch.tensor(size[0], device=device, dtype=dtype)
            w_ct = torch.tensor(size[1], device=device, dtype=dtype)
        h_ct = h_ct.floor()
        w_ct = w_ct.floor()

        h_out = h_out.where(cond_bool, h_ct)
        w_out = w_out.where(cond_bool, w_ct)

    return dict(size=torch.stack([h_out, w_out], dim=1).to(device=_device, dtype=_dtype))


def make():
    return random_crop_size_generator


def inputs():
    T = torch.tensor
    return [
        (3, (30, 30), T([0.7, 1.3]), T([0.9, 1.0])),            # all valid
        (4, (32, 24), T([0.08, 1.0]), T([3.0 / 4, 4.0 / 3])),   # all valid, non-square
        (2, (20, 20), T([2.0, 3.0]), T([0.9, 1.1])),            # no valid trial, in_ratio > min ratio
        (3, (16, 32), T([1.5, 2.0]), T([0.75, 1.33])),          # fallback, in_ratio < min ratio
        (2, (24, 24), T([1.2, 2.0]), T([1.0, 1.2])),            # fallback, in_ratio == min ratio (whole image)
        (5, (28, 28), T([0.5, 1.4]), T([0.5, 2.0])),            # some rows fall back
        (0, (10, 10), T([0.5, 1.0]), T([0.5, 2.0])),            # empty batch
        (3, (40, 20), T([0.9, 1.0]), T([1.5, 3.0]), True),      # same_on_batch
        (1, (12, 12), T([0.3, 0.35]), T([1.0, 1.2])),           # narrow ranges
    ]


def failing_inputs():
    T = torch.tensor
    return [
        (2, (20, 20), T([0.9, 0.5]), T([0.9, 1.1])),            # scale[0] > scale[1]
        (2, (20, 20), T([0.5, 0.9]), T([float("nan"), 1.1])),   # NaN ratio: out of bounds
        (2, (20, 20), T([0.5, 0.9, 1.0]), T([0.9, 1.1])),       # wrong length
    ]


KIND = "branch-raise"
