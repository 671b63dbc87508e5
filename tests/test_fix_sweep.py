"""`graphmend fix --diff` over the whole installed transformers package (4.57.6, pinned in the test
extras): no crash, every output parses, and fixing the output again changes nothing.

The same loop as bench/fix_sweep.py, which also prints the counts for the closing notes; this
test only asserts the three properties, on every file, for safe and for unsafe fixes."""

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


@pytest.mark.parametrize("level", [Safety.SAFE, Safety.UNSAFE], ids=["safe", "unsafe"])
def test_fixing_transformers_never_crashes_always_parses_and_is_idempotent(level: Safety) -> None:
    assert transformers.__version__ == "4.57.6" and len(FILES) > 2000
    config = Config()
    problems: list[str] = []
    fixed_files = 0
    for path in FILES:
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
