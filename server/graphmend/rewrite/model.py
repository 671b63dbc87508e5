"""What a fixer returns: a fix (edits plus a title that says what changes) or the reason it declines.

A fix is `safe` when it keeps the program's meaning under preconditions the fixer checked, and
`unsafe` when it changes something observable (a print that no longer runs under compile, a global
config flag). Unsafe fixes are offered one at a time and applied in bulk only on request.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..findings import Edit, Finding


class Safety(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


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
    also: tuple["Declined", ...] = ()  # the other fixers' reasons, when several were tried


class DeclineError(Exception):
    """Raised inside fixers to decline with a reason; turned into a `Declined` by the engine."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason
