"""Fix planning nested in fix planning (lookahead, variants) stops at a fixed depth with a decline,
so that no fixer that re-plans on the text it would write can keep the CLI or the editor busy."""

from __future__ import annotations

import pytest
from graphmend.rewrite.model import DeclineError
from graphmend.rewrite.nesting import MAX_DEPTH, nested, too_deep


def _descend(levels: int) -> int:
    """How many levels `nested` admits before it declines, asked `levels` deep."""
    if levels == 0:
        return 0
    try:
        with nested(DeclineError("plan-depth", "too deep")):
            return 1 + _descend(levels - 1)
    except DeclineError:
        return 0


def test_planning_nests_at_most_max_depth_levels() -> None:
    assert _descend(MAX_DEPTH + 3) == MAX_DEPTH


def test_the_depth_is_restored_after_a_decline_inside() -> None:
    with pytest.raises(DeclineError), nested(DeclineError("plan-depth", "too deep")):
        assert not too_deep()
        raise DeclineError("other", "a fixer declined inside")
    assert _descend(MAX_DEPTH) == MAX_DEPTH  # nothing left counted from the failed level
