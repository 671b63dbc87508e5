"""The fixers, by the codes they fix. Safe fixers come first: for a code with both a safe and a
riskier fixer (GM201: keep the tensor, or capture scalars globally), the riskier one is only tried
when the run's fix level allows it and the safe one declined. Among the riskier ones the order of
ALL_FIXERS decides: the sparse MoE dispatch (unsafe: a process-wide flag, but the original's
values and cost) comes before the dense one (costly: num_experts/top_k times the compute)."""

from __future__ import annotations

from typing import Protocol

from ...findings import Finding
from ..context import FixContext
from ..model import Fix, Safety
from .asserts import AssertScalarFixer
from .bounded_counts import BoundedCountsFixer
from .comprehension_loop import ComprehensionLoopFixer
from .disabled import RemoveDisableFixer
from .guarded_fill import GuardedMaskedFillFixer
from .held_condition import HeldConditionFixer
from .hoist import HoistHelperArgumentFixer
from .item_batch import ItemBatchFixer
from .length_fill import LengthFillFixer
from .logic_value import LogicValueFixer
from .mask_check import MaskCheckFixer
from .masked import MaskedReductionFixer
from .masked_assign import MaskedAssignFixer
from .masked_rows import MaskedRowLossFixer
from .membership import MembershipFixer
from .moe import MaskedExpertUpdateFixer, MoEDispatchFixer, SparseMoEDispatchFixer
from .number_branch import NumberBranchFixer
from .ordered import OrderedEffectFixer
from .scalars import ScalarFixer
from .slice_argument import SliceBoundArgumentFixer
from .slice_bounds import SliceBoundsFixer
from .static_first import StaticFirstFixer
from .super_property import SuperPropertyFixer
from .traceable_query import TraceableQueryFixer
from .training_draw import TrainingDrawFixer
from .unsafe import ConfigFlagFixer, EagerCheckFixer, EagerOnlyFixer, RemoveGraphBreakFixer
from .where import WhereFixer
from .while_loop import WhileLoopFixer


class Fixer(Protocol):
    codes: frozenset[str]
    safety: Safety

    def plan(self, finding: Finding, ctx: FixContext) -> Fix: ...


ALL_FIXERS: tuple[Fixer, ...] = (
    MaskCheckFixer(),  # before Where: skipping an all-ones test costs less than selecting over it
    GuardedMaskedFillFixer(),  # before Where too: filling nothing needs no test at all
    WhereFixer(),
    WhileLoopFixer(),
    LengthFillFixer(),  # before Scalar: a length read per row is a slice bound, which Scalar declines
    SliceBoundArgumentFixer(),  # likewise, and before the loop's: its reasons for a bound that is a parameter say more
    SliceBoundsFixer(),  # likewise: bounds from a tensor of Python numbers become the numbers
    ScalarFixer(),
    MaskedReductionFixer(),
    MaskedRowLossFixer(),
    MaskedAssignFixer(),
    OrderedEffectFixer(),  # after Where and Scalar: an `if` they can turn into tensor code needs no op
    LogicValueFixer(),  # after the ordered op: a check or log on `a and b` moves whole into the op
    MembershipFixer(),  # after the ordered op, which takes a check or a log on `x in t` as it is
    TraceableQueryFixer(),
    TrainingDrawFixer(),
    SuperPropertyFixer(),
    RemoveDisableFixer(),
    BoundedCountsFixer(),
    ComprehensionLoopFixer(),
    HoistHelperArgumentFixer(),
    HeldConditionFixer(),  # after every fixer that takes the finding where it stands
    NumberBranchFixer(),  # likewise: it only respells the branch for the scalar fixer
    StaticFirstFixer(),  # after every fixer that removes the break on every path: it removes it on some
    ItemBatchFixer(),  # after every fixer that keeps the number a tensor: it only batches the breaks
    SparseMoEDispatchFixer(),  # these three before the flag and eager-check fixers: it removes the break, they defer it
    MoEDispatchFixer(),
    MaskedExpertUpdateFixer(),
    AssertScalarFixer(),  # before the capture_scalar_outputs flag: local, not process-wide
    EagerOnlyFixer(),
    EagerCheckFixer(),
    RemoveGraphBreakFixer(),
    ConfigFlagFixer(),
)


def fixers_for(code: str, level: Safety) -> list[Fixer]:
    """The fixers a run at `level` tries for `code`: safe ones first, then the rest in ALL_FIXERS order."""
    found = [f for f in ALL_FIXERS if code in f.codes and level.allows(f.safety)]
    return sorted(found, key=lambda f: f.safety is not Safety.SAFE)


def fixable_codes(level: Safety) -> frozenset[str]:
    return frozenset(code for f in ALL_FIXERS if level.allows(f.safety) for code in f.codes)
