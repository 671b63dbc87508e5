"""MONAI NormalizeIntensity(nonzero=True, channel_wise=True): z-score each channel over its nonzero
voxels only (the BraTS tutorials' `NormalizeIntensityd(keys="image", nonzero=True, channel_wise=True)`).

Source: https://github.com/Project-MONAI/MONAI/blob/dev/monai/transforms/intensity/array.py
(`NormalizeIntensity._mean`, `_std`, `_normalize`, `__call__`; `convert_data_type` /
`convert_to_dst_type` reduced to `.to(torch.float32)`, which, like them, returns the same tensor when
it already is float32, so the input is normalised in place).

Breaks: `masked_img = img[slices]` (boolean-mask gather, dynamic shape), `if not slices.any()`
(data-dependent branch), `x.item()` in `_mean` / `_std`, and the masked assignment
`img[slices] = (masked_img - _sub) / _div`.

HAND: masked statistics over the whole channel (`where(slices, img, 0).sum() / count`, the same for
the variance), a divisor of 1 where the std is 0 (`torch.where`), and the in-place write
`img[...] = torch.where(slices, (img - mean) / div, img)` (a channel with no nonzero voxel keeps
its values, as the early return does).
"""
from typing import Optional, Sequence, Union

import numpy as np
import torch

KIND = "mask+item"


class NormalizeIntensity:
    def __init__(
        self,
        subtrahend: Optional[Sequence] = None,
        divisor: Optional[Sequence] = None,
        nonzero: bool = False,
        channel_wise: bool = False,
    ) -> None:
        self.subtrahend = subtrahend
        self.divisor = divisor
        self.nonzero = nonzero
        self.channel_wise = channel_wise

    @staticmethod
    def _mean(x):
        if isinstance(x, np.ndarray):
            return np.mean(x)
        x = torch.mean(x.float())
        return x.item() if x.numel() == 1 else x

    @staticmethod
    def _std(x):
        if isinstance(x, np.ndarray):
            return np.std(x)
        x = torch.std(x.float(), unbiased=False)
        return x.item() if x.numel() == 1 else x

    def _normalize(self, img, sub=None, div=None):
        img = img.to(torch.float32)

        if self.nonzero:
            slices = img != 0
            masked_img = img[slices]
            if not slices.any():
                return img
        else:
            slices = None
            masked_img = img

        _sub = sub if sub is not None else self._mean(masked_img)
        if isinstance(_sub, (torch.Tensor, np.ndarray)):
            if slices is not None:
                _sub = _sub[slices]

        _div = div if div is not None else self._std(masked_img)
        if np.isscalar(_div):
            if _div == 0.0:
                _div = 1.0
        elif isinstance(_div, (torch.Tensor, np.ndarray)):
            if slices is not None:
                _div = _div[slices]
            _div[_div == 0.0] = 1.0

        if slices is not None:
            img[slices] = (masked_img - _sub) / _div
        else:
            img = (img - _sub) / _div
        return img

    def __call__(self, img: torch.Tensor) -> torch.Tensor:
        if self.channel_wise:
            if self.subtrahend is not None and len(self.subtrahend) != len(img):
                raise ValueError(f"img has {len(img)} channels, but subtrahend has {len(self.subtrahend)} components.")
            if self.divisor is not None and len(self.divisor) != len(img):
                raise ValueError(f"img has {len(img)} channels, but divisor has {len(self.divisor)} components.")

            img_ = img.to(torch.float32)
            for i, d in enumerate(img_):
                img_[i] = self._normalize(  # type: ignore
                    d,
                    sub=self.subtrahend[i] if self.subtrahend is not None else None,
                    div=self.divisor[i] if self.divisor is not None else None,
                )
            out = img_
        else:
            img_ = img.to(torch.float32)
            out = self._normalize(img_, self.subtrahend, self.divisor)
        return out


def make():
    return NormalizeIntensity(nonzero=True, channel_wise=True).__call__


def _brain(c, d, h, w, p=0.5):
    x = torch.randn(c, d, h, w) * 3 + 5
    return x * (torch.rand(1, d, h, w) < p)


def inputs():
    torch.manual_seed(0)
    return [
        (_brain(2, 3, 4, 4),),
        (_brain(1, 2, 5, 5, 0.9),),
        (torch.cat([_brain(1, 2, 3, 3), torch.zeros(1, 2, 3, 3)]),),       # an empty channel: early return
        (torch.zeros(2, 2, 2, 2),),                                         # nothing to normalise
        (torch.cat([torch.full((1, 2, 3, 3), 0.3) * (torch.rand(1, 2, 3, 3) < 0.5), _brain(1, 2, 3, 3)]),),  # std 0
        (_brain(3, 2, 4, 3, 0.2),),
        (torch.randn(2, 4, 4) + 1,),                                         # no zeros at all
        (_brain(4, 1, 3, 3),),
    ]
