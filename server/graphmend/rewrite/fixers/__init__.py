"""The fixers, by the codes they fix. Safe fixers come first: for a code with both a safe and an
unsafe fixer (GM201: keep the tensor, or capture scalars globally), the unsafe one is only tried
when unsafe fixes are allowed and the safe one declined."""

from __future__ import annotations

from typing import Protocol

from ...findings import Finding
from ..context import FixContext
from ..model import Fix, Safety
from .asserts import AssertScalarFixer
from .mask_check import MaskCheckFixer
from .masked import MaskedReductionFixer
from .masked_assign import MaskedAssignFixer
from .moe import MaskedExpertUpdateFixer, MoEDispatchFixer
from .ordered import OrderedEffectFixer
from .scalars import ScalarFixer
from .unsafe import ConfigFlagFixer, EagerCheckFixer, EagerOnlyFixer, RemoveGraphBreakFixer
from .where import WhereFixer
from .while_loop import WhileLoopFixer


class Fixer(Protocol):
    codes: frozenset[str]
    safety: Safety

    def plan(self, finding: Finding, ctx: FixContext) -> Fix: ...


ALL_FIXERS: tuple[Fixer, ...] = (
    MaskCheckFixer(),  # before Where: skipping an all-ones test costs less than selecting over it
    WhereFixer(),
    WhileLoopFixer(),
    ScalarFixer(),
    MaskedReductionFixer(),
    MaskedAssignFixer(),
    OrderedEffectFixer(),  # after Where and Scalar: an `if` they can turn into tensor code needs no op
    MoEDispatchFixer(),  # these two before the flag and eager-check fixers: it removes the break, they defer it
    MaskedExpertUpdateFixer(),
    AssertScalarFixer(),  # before the capture_scalar_outputs flag: local, not process-wide
    EagerOnlyFixer(),
    EagerCheckFixer(),
    RemoveGraphBreakFixer(),
    ConfigFlagFixer(),
)


def fixers_for(code: str, unsafe: bool) -> list[Fixer]:
    found = [f for f in ALL_FIXERS if code in f.codes and (unsafe or f.safety is Safety.SAFE)]
    return sorted(found, key=lambda f: f.safety is Safety.UNSAFE)


def fixable_codes(unsafe: bool) -> frozenset[str]:
    return frozenset(code for f in ALL_FIXERS if unsafe or f.safety is Safety.SAFE for code in f.codes)
