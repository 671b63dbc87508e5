"""What a fixer returns: a fix (edits plus a title that says what changes) or the reason it declines.

Three tiers, each selectable on its own (`graphmend fix --fix-level`, the editor's `quickFixLevel`):
- `safe`: keeps the program's meaning under preconditions the fixer checked: same values, dtypes,
  shapes and gradients, every print, log record and warning, every check still raising. Fix-all
  and "mend whole workspace" apply only these.
- `costly`: the same values up to floating-point rounding, but more compute or memory (the title
  names the factor, e.g. every expert on every token).
- `unsafe`: changes something observable (a print that no longer runs under compile, a
  process-wide dynamo flag). Offered one at a time, applied in bulk only on request.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..findings import Edit, Finding


class Safety(str, enum.Enum):
    """A fix's tier, and (as a fix level) the riskiest tier a run applies: levels are ordered."""

    SAFE = "safe"
    COSTLY = "costly"
    UNSAFE = "unsafe"

    def allows(self, tier: Safety) -> bool:
        """Whether a run at this level applies fixes of `tier`."""
        return _ORDER.index(tier) <= _ORDER.index(self)

    @property
    def label(self) -> str:
        """The prefix of a quick fix's title ("" for a safe one)."""
        return "" if self is Safety.SAFE else f"{self.value.capitalize()}: "


_ORDER = (Safety.SAFE, Safety.COSTLY, Safety.UNSAFE)


@dataclass(frozen=True)
class Fix:
    finding: Finding
    title: str
    safety: Safety
    edits: tuple[Edit, ...]
    full: bool = True  # removes the break entirely (False: reduces it)


@dataclass(frozen=True)
class Declined:
    finding: Finding
    reason: str  # for people: why this occurrence cannot be rewritten safely
    key: str  # for statistics: a short stable id of the precondition that failed
    also: tuple[Declined, ...] = ()  # the other fixers' reasons, when several were tried
    alternative: str | None = None  # the title of a fix above the run's level that would apply, if one does
    alternative_tier: Safety | None = None  # and its tier

    def explanation(self, how_to_apply: str) -> str:
        """The reason, and the riskier fix that exists instead, with how this front end applies it
        (`how_to_apply` may name the tier as `{level}`)."""
        if self.alternative is None:
            return self.reason
        tier = self.alternative_tier or Safety.UNSAFE
        article = "an" if tier is Safety.UNSAFE else "a"
        return f"{self.reason}; {article} {tier.value} fix exists ({self.alternative}): {how_to_apply.format(level=tier.value)}"


# Decline keys that mean "this is not the pattern I rewrite", as opposed to "it is, but a
# precondition fails": when several fixers decline, the user is shown a reason of the second kind.
NOT_MY_PATTERN = frozenset(
    {
        "not-an-if", "not-a-while", "not-an-assert", "not-a-mask", "not-a-mask-check", "not-a-guarded-fill", "not-a-reduction",
        "not-a-statement", "not-effect-only", "moe-no-dispatch", "no-node", "no-cst-match", "not-in-function", "not-a-count",
        "not-a-row-loss", "not-a-length-loop", "not-a-held-condition", "held-condition-reads", "not-a-number-branch", "not-unpacked",
        "not-an-item-read", "not-a-bound-parameter",
        "not-an-operand", "no-python-test", "already-first", "value-read",  # the and-reorder's shape (static_first.py)
        "statement",  # where: a branch that raises or logs is the ordered op's pattern, not a selection
    }
)


class DeclineError(Exception):
    """Raised inside fixers to decline with a reason; turned into a `Declined` by the engine."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason
