"""`graphmend fix --diff` over the whole installed transformers package (4.57.6, pinned in the test
extras): no crash, every output parses, and fixing the output again changes nothing.

The same loop as bench/fix_sweep.py, which also prints the counts for the closing notes; this
test only asserts the three properties, on every file, at each fix level."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import transformers
from graphmend.config import Config
from graphmend.rewrite import fix_source
from graphmend.rewrite.files import fix_file
from graphmend.rewrite.model import Safety

PACKAGE = Path(transformers.__file__).parent
FILES = sorted(PACKAGE.rglob("*.py"))


LEVELS = [Safety.SAFE, Safety.COSTLY, Safety.UNSAFE]


def _scope(level: Safety) -> list[Path]:
    """The costly tier adds only the MoE dispatch fixers to the safe ones: its sweep covers the
    files with an expert dispatch (the safe sweep covers the rest of what it applies)."""
    if level is Safety.COSTLY:
        return [p for p in FILES if "expert" in p.read_text(encoding="utf-8", errors="replace")]
    return FILES


@pytest.mark.parametrize("level", LEVELS, ids=[level.value for level in LEVELS])
def test_fixing_transformers_never_crashes_always_parses_and_is_idempotent(level: Safety) -> None:
    assert transformers.__version__ == "4.57.6" and len(FILES) > 2000
    config = Config()
    problems: list[str] = []
    fixed_files = 0
    for path in _scope(level):
        outcome = fix_file(path, config, level=level, write=False)  # what `fix --diff` runs
        if outcome.fix is None:
            continue  # not Python text (reported as skipped by the CLI)
        result = outcome.fix
        if not result.changed:
            continue
        fixed_files += 1
        try:
            ast.parse(result.fixed)
        except SyntaxError as exc:
            problems.append(f"{path}: the output does not parse ({exc})")
            continue
        if fix_source(result.fixed, str(path), level=level).fixed != result.fixed:
            problems.append(f"{path}: fixing the output again changes it")
    assert not problems, "\n".join(problems[:20])
    assert fixed_files > 10, "the sweep fixed almost nothing: the rewrites or the discovery broke"
