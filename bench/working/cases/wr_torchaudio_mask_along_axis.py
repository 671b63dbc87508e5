"""torchaudio.functional.mask_along_axis (SpecAugment time/frequency masking).

Source: https://github.com/pytorch/audio/blob/main/src/torchaudio/functional/functional.py
(`mask_along_axis`, used by torchaudio.transforms.TimeMasking / FrequencyMasking).

Breaks: `if mask_end - mask_start >= mask_param: raise ValueError(...)` branches on a 0-d tensor
computed from `torch.rand` (data-dependent branching).

HAND: the check moves into a `torch.library.custom_op` with an ORDERED effect that raises the same
ValueError at run time; everything else is unchanged.
"""
import torch
from torch import Tensor

KIND = "branch-check"


def _get_mask_param(mask_param: int, p: float, axis_length: int) -> int:
    if p == 1.0:
        return mask_param
    else:
        return min(mask_param, int(axis_length * p))


def mask_along_axis(specgram: Tensor, mask_param: int, mask_value: float, axis: int, p: float = 1.0) -> Tensor:
    dim = specgram.dim()

    if dim < 2:
        raise ValueError(f"Spectrogram must have at least two dimensions (time and frequency) (given {dim}).")

    if axis not in [dim - 2, dim - 1]:
        raise ValueError(
            f"Only Frequency and Time masking are supported (axis {dim-2} and axis {dim-1} supported; {axis} given)."
        )

    if not 0.0 <= p <= 1.0:
        raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")

    mask_param = _get_mask_param(mask_param, p, specgram.shape[axis])
    if mask_param < 1:
        return specgram

    # pack batch
    shape = specgram.size()
    specgram = specgram.reshape([-1] + list(shape[-2:]))
    # After packing, specgram is a 3D tensor, and the axis corresponding to the to-be-masked dimension
    # is now (axis - dim + 3), e.g. a tensor of shape (10, 2, 50, 10, 2) becomes a tensor of shape (1000, 10, 2).
    value = torch.rand(1) * mask_param
    min_value = torch.rand(1) * (specgram.size(axis - dim + 3) - value)

    mask_start = (min_value.long()).squeeze()
    mask_end = (min_value.long() + value.long()).squeeze()
    mask = torch.arange(0, specgram.shape[axis - dim + 3], device=specgram.device, dtype=specgram.dtype)
    mask = (mask >= mask_start) & (mask < mask_end)
    # unsqueeze the mask if the axis is frequency
    if axis == dim - 2:
        mask = mask.unsqueeze(-1)

    if mask_end - mask_start >= mask_param:
        raise ValueError("Number of columns to be masked should be less than mask_param")

    specgram = specgram.masked_fill(mask, mask_value)

    # unpack batch
    specgram = specgram.reshape(shape[:-2] + specgram.shape[-2:])

    return specgram


def make():
    return mask_along_axis


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(2, 8, 12), 5, 0.0, 2),          # time masking
        (torch.randn(2, 8, 12), 4, 0.0, 1),          # frequency masking
        (torch.randn(8, 12), 6, -1.0, 1),            # 2-D, time
        (torch.randn(8, 12), 3, 0.5, 0),             # 2-D, frequency
        (torch.randn(2, 3, 6, 10), 4, 0.0, 3, 0.5),  # p < 1 caps mask_param
        (torch.randn(2, 6, 10), 5, 0.0, 2, 0.05),    # p so small that mask_param < 1: returned as is
        (torch.randn(1, 16, 4), 10, 2.0, 1, 1.0),
        (torch.randn(3, 5, 7), 1, 0.0, 2),           # mask of width 0
    ]


def failing_inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(7), 3, 0.0, 0),                 # fewer than two dims
        (torch.randn(2, 8, 12), 3, 0.0, 0),          # masking the batch axis
        (torch.randn(2, 8, 12), 3, 0.0, 2, 1.5),     # p out of range
    ]
