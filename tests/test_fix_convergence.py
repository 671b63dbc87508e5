"""A fix that rewrites without removing its finding must not be applied over and over: the engine
stops at MAX_FIXES_PER_FILE, and where the findings did not go down it keeps the source as it was
(a review found a report helper moved 500 times into ops nested 500 deep, written to disk)."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphmend.findings import Edit, Span
from graphmend.rewrite import engine, fix_source
from graphmend.rewrite.model import Fix, Safety

SOURCE = """import torch


@torch.compile
def f(x):
    print("value", x.sum())
    return x + 1
"""


class _FixerThatNeverRemovesItsFinding:
    """Adds a comment line above the finding: the code changes, the break stays."""

    codes = frozenset({"GM301"})
    safety = Safety.SAFE

    def plan(self, finding, ctx):  # type: ignore[no-untyped-def]
        line = finding.span.start_line
        return Fix(finding, "comment", Safety.SAFE, (Edit(Span(line, 0, line, 0), "    # again\n"),))


def test_a_fix_that_keeps_bringing_its_finding_back_leaves_the_source_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MAX_FIXES_PER_FILE", 6)
    monkeypatch.setattr(engine, "fixers_for", lambda code, level: [_FixerThatNeverRemovesItsFinding()] if code == "GM301" else [])
    result = fix_source(SOURCE, "f.py")
    assert result.fixed == SOURCE
    assert not result.applied
    assert [f.code for f in result.remaining] == ["GM301"]


def test_a_file_fixed_to_a_fixed_point_is_not_reverted(tmp_path: Path) -> None:
    fixed = fix_source(SOURCE, str(tmp_path / "f.py"))
    assert fixed.applied and fixed.fixed != SOURCE
    assert not [f for f in fixed.remaining if f.code == "GM301"]
