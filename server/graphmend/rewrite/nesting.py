"""How deep fix planning may nest: a fix planned while planning another, on the text that one
would write (`lookahead`: would the follow-up fix apply?) or on a variant of the file (`variant`:
a tail copied, a mask hoisted). A fixer that declines on the rewritten text the way it declined
on the file would otherwise re-plan forever, each level a whole re-analysis, and `graphmend fix`
or the editor's quick fixes would never answer (bench/blind's DIEN case, stop 57)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .model import DeclineError

MAX_DEPTH = 4
_DEPTH: ContextVar[int] = ContextVar("graphmend_plan_depth", default=0)


def too_deep() -> bool:
    """Whether planning is already `MAX_DEPTH` levels deep: test before paying for a re-analysis."""
    return _DEPTH.get() >= MAX_DEPTH


@contextmanager
def nested(declined: DeclineError) -> Iterator[None]:
    """One level deeper for the planning inside; `declined` is raised instead at `MAX_DEPTH`."""
    if too_deep():
        raise declined
    token = _DEPTH.set(_DEPTH.get() + 1)
    try:
        yield
    finally:
        _DEPTH.reset(token)
