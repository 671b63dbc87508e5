"""Hand rewrite of cases/wf_warnings_warn_builtin.py: the warning is issued at run time by a
`torch.library.custom_op` with an ORDERED effect (same category and text)."""
import warnings

import torch
from torch._library.effects import EffectType

KIND = "warnings"

_NS = "wf_warnings_warn"
if not hasattr(getattr(torch.ops, _NS), "warn_aaa"):

    @torch.library.custom_op(f"{_NS}::warn_aaa", mutates_args=())
    def _warn_aaa(y: torch.Tensor) -> None:
        warnings.warn("aaa")

    @_warn_aaa.register_fake
    def _(y):
        return None

    _warn_aaa.register_effect(EffectType.ORDERED)


def fn(x):
    y = x.exp() - 1
    getattr(torch.ops, _NS).warn_aaa(y)
    return y * x.sigmoid()


def make():
    return fn


def inputs():
    g = torch.Generator().manual_seed(4)
    return [
        (torch.randn(3, generator=g),),
        (torch.randn(2, 4, generator=g),),
        (torch.zeros(5),),
        (torch.tensor([float("inf"), -1.0]),),
        (torch.randn(1, generator=g, dtype=torch.float64),),
        (torch.randn(3, 2, 2, generator=g),),
        (torch.tensor(0.5),),
        (torch.linspace(-3, 3, 7),),
    ]
