"""Kornia gamma correction (kornia.enhance.adjust_gamma), as used by ColorJitter-style GPU augmentation.

Source: https://github.com/kornia/kornia/blob/main/kornia/enhance/adjust.py (adjust_gamma)
Breaks: `if (gamma < 0.0).any(): raise ValueError(...)` and `if (gain < 0.0).any(): raise ValueError(...)`
        -- input validation branching on tensor data (two sites).
HAND: both checks become one torch.library.custom_op each, with an ORDERED effect, that raises the same
      ValueError (same text, including the tensor's repr) at run time; the arithmetic is unchanged.
      The ops carry torch.Tag.nondeterministic_seeded only so that fake-tensor constant propagation does
      not run the check at trace time when gamma/gain come from a Python float (Tensor([gamma])).
"""
import torch
from torch import Tensor
from typing import Union

from torch._higher_order_ops.effects import _EffectType, _register_effectful_op


@torch.library.custom_op("wx_kornia_gamma::check_gamma", mutates_args=(), tags=(torch.Tag.nondeterministic_seeded,))
def _check_gamma(gamma: Tensor) -> None:
    if (gamma < 0.0).any():
        raise ValueError(f"Gamma must be non-negative. Got {gamma}")


@torch.library.custom_op("wx_kornia_gamma::check_gain", mutates_args=(), tags=(torch.Tag.nondeterministic_seeded,))
def _check_gain(gain: Tensor) -> None:
    if (gain < 0.0).any():
        raise ValueError(f"Gain must be non-negative. Got {gain}")


@_check_gamma.register_fake
def _(gamma):
    return None


@_check_gain.register_fake
def _(gain):
    return None


_register_effectful_op(torch.ops.wx_kornia_gamma.check_gamma.default, _EffectType.ORDERED)
_register_effectful_op(torch.ops.wx_kornia_gamma.check_gain.default, _EffectType.ORDERED)


KIND = "data-dependent input check (raise)"
GRAD = True


def adjust_gamma(input: Tensor, gamma: Union[float, Tensor], gain: Union[float, Tensor] = 1.0) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"Input type is not a Tensor. Got {type(input)}")

    if not isinstance(gamma, (float, Tensor)):
        raise TypeError(f"The gamma should be a positive float or Tensor. Got {type(gamma)}")

    if not isinstance(gain, (float, Tensor)):
        raise TypeError(f"The gain should be a positive float or Tensor. Got {type(gain)}")

    if isinstance(gamma, float):
        gamma = Tensor([gamma])

    if isinstance(gain, float):
        gain = Tensor([gain])

    gamma = gamma.to(input.device).to(input.dtype)
    gain = gain.to(input.device).to(input.dtype)

    _check_gamma(gamma)

    _check_gain(gain)

    for _ in range(len(input.shape) - len(gamma.shape)):
        gamma = torch.unsqueeze(gamma, dim=-1)

    for _ in range(len(input.shape) - len(gain.shape)):
        gain = torch.unsqueeze(gain, dim=-1)

    # Apply the gamma correction
    x_adjust: Tensor = gain * torch.pow(input, gamma)

    # Truncate between pixel values
    out: Tensor = torch.clamp(x_adjust, 0.0, 1.0)

    return out


def make():
    return adjust_gamma


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(8):
        b = 1 + i % 3
        x = torch.rand(b, 2, 3, 3, generator=g)
        if i % 4 == 0:
            gamma = 0.5 + float(i) / 4
        else:
            gamma = torch.rand(b, generator=g) * 2
        if i % 3 == 0:
            gain = 1.0
        elif i % 3 == 1:
            gain = 0.5 + torch.rand(b, generator=g)
        else:
            gain = torch.tensor([1.5])
        out.append((x, gamma, gain))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(2, 2, 3, 3, generator=g)
    return [
        (x, torch.tensor([0.5, -1.0]), 1.0),
        (x, torch.tensor([1.0, 2.0]), torch.tensor([-0.5, 1.0])),
        (x, -2.0, 1.0),
    ]
