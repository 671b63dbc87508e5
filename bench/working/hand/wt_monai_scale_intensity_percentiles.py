"""MONAI ScaleIntensityRangePercentiles (channel-wise) -> ScaleIntensityRange, torch backend.

Source: https://github.com/Project-MONAI/MONAI/blob/dev/monai/transforms/intensity/array.py
        (ScaleIntensityRange.__call__, ScaleIntensityRangePercentiles._normalize / __call__) and
        https://github.com/Project-MONAI/MONAI/blob/dev/monai/transforms/utils_pytorch_numpy_unification.py
        (percentile: the torch.quantile path for tensors under 1e6 elements). Reduced: MetaTensor /
        convert_data_type plumbing replaced by plain tensor ops.

Breaks: `if self.a_max - self.a_min == 0.0:` — a_min/a_max are 0-d tensors from torch.quantile, so this
is a data-dependent branch (per channel), whose taken side calls `warn("Divide by zero (a_min == a_max)",
Warning)`; `percentile`'s q check `if ((q_np < 0) | (q_np > 100)).any():` on a NumPy array built
from the Python q is traced as a tensor by dynamo and branches on it too.

(hand rewrite)
HAND: both sides are computed and selected with torch.where (safe divisor where the range is 0); the
warning is emitted from an ordered custom op (same text, category and count) when the range is 0;
the q range check is done on the Python value(s) of q instead of a NumPy array.
"""
from __future__ import annotations

from warnings import warn

import numpy as np
import torch
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = "data-dependent branch + warn"

_NS = "wt_monai_sirp"
if not hasattr(getattr(torch.ops, _NS), "warn_if"):

    @torch.library.custom_op(f"{_NS}::warn_if", mutates_args=())
    def _warn_if_op(cond: torch.Tensor, msg: str) -> None:
        if bool(cond):
            warn(msg, Warning)

    @_warn_if_op.register_fake
    def _(cond, msg):
        return None

    _register_effectful_op(getattr(torch.ops, _NS).warn_if.default, _EffectType.ORDERED)


def _warn_if(cond, msg):
    getattr(torch.ops, _NS).warn_if(cond, msg)


def percentile(x: torch.Tensor, q, dim=None, keepdim: bool = False):
    q_list = list(q) if isinstance(q, (list, tuple)) else [q]
    if any(v < 0 or v > 100 for v in q_list):
        raise ValueError(f"q values must be in [0, 100], got values: {q}.")
    q = torch.as_tensor(q / 100.0, dtype=x.dtype, device=x.device)
    result = torch.quantile(x, q, dim=dim, keepdim=keepdim)
    return result


class ScaleIntensityRange:
    def __init__(self, a_min, a_max, b_min=None, b_max=None, clip: bool = False, dtype=torch.float32) -> None:
        self.a_min = a_min
        self.a_max = a_max
        self.b_min = b_min
        self.b_max = b_max
        self.clip = clip
        self.dtype = dtype

    def __call__(self, img: torch.Tensor) -> torch.Tensor:
        dtype = self.dtype or img.dtype
        rng = self.a_max - self.a_min
        zero = rng == 0.0
        _warn_if(zero, "Divide by zero (a_min == a_max)")
        if self.b_min is None:
            degenerate = img - self.a_min
        else:
            degenerate = img - self.a_min + self.b_min

        out = (img - self.a_min) / torch.where(zero, torch.ones_like(rng), rng)
        if (self.b_min is not None) and (self.b_max is not None):
            out = out * (self.b_max - self.b_min) + self.b_min
        if self.clip:
            out = torch.clamp(out, self.b_min, self.b_max)
        ret = out.to(dtype)
        # inputs are float32 (MONAI's default dtype), so both sides share the dtype
        return torch.where(zero, degenerate, ret)


class ScaleIntensityRangePercentiles:
    def __init__(self, lower: float, upper: float, b_min, b_max, clip: bool = False, relative: bool = False,
                 channel_wise: bool = False, dtype=torch.float32) -> None:
        if lower < 0.0 or lower > 100.0:
            raise ValueError("Percentiles must be in the range [0, 100]")
        if upper < 0.0 or upper > 100.0:
            raise ValueError("Percentiles must be in the range [0, 100]")
        self.lower = lower
        self.upper = upper
        self.b_min = b_min
        self.b_max = b_max
        self.clip = clip
        self.relative = relative
        self.channel_wise = channel_wise
        self.dtype = dtype

    def _normalize(self, img: torch.Tensor) -> torch.Tensor:
        a_min = percentile(img, self.lower)
        a_max = percentile(img, self.upper)
        b_min = self.b_min
        b_max = self.b_max

        if self.relative:
            if (self.b_min is None) or (self.b_max is None):
                raise ValueError("If it is relative, b_min and b_max should not be None.")
            b_min = ((self.b_max - self.b_min) * (self.lower / 100.0)) + self.b_min
            b_max = ((self.b_max - self.b_min) * (self.upper / 100.0)) + self.b_min

        scalar = ScaleIntensityRange(a_min=a_min, a_max=a_max, b_min=b_min, b_max=b_max, clip=self.clip, dtype=self.dtype)
        img = scalar(img)
        return img

    def __call__(self, img: torch.Tensor) -> torch.Tensor:
        img_t = img
        if self.channel_wise:
            img_t = torch.stack([self._normalize(img=d) for d in img_t])
        else:
            img_t = self._normalize(img=img_t)
        return img_t


def make():
    return ScaleIntensityRangePercentiles(lower=10, upper=90, b_min=0.0, b_max=1.0, clip=True, channel_wise=True).__call__


def inputs():
    g = torch.Generator().manual_seed(0)
    const = torch.full((1, 4, 4), 3.0)
    return [
        (torch.cat([const, torch.randn(1, 4, 4, generator=g)]),),        # channel 0 constant: warns
        (torch.randn(2, 4, 4, generator=g) * 100,),
        (torch.randn(3, 5, 5, generator=g),),
        (torch.zeros(2, 3, 3),),                                           # all constant: warns twice
        (torch.rand(1, 6, 6, generator=g) * 1000 - 500,),
        (torch.cat([torch.randn(1, 4, 4, generator=g), const * -1.0]),),   # channel 1 constant
        (torch.randint(0, 255, (2, 4, 4), generator=g).float(),),
        (torch.randn(1, 2, 3, 3, generator=g),),
    ]
