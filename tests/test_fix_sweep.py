"""`graphmend fix --diff` over the whole installed transformers package (4.57.6, pinned in the test
extras): no crash, every output parses, and fixing the output again changes nothing, at every fix
level.

The same loop as bench/fix_sweep.py, which also prints the counts for the closing notes (and
sweeps every file at every level); this test only asserts the three properties. Every file is
fixed at the safe level. A riskier level can only differ from the safe one where a riskier fix
applies, and the safe run says where: a finding it leaves declined names the riskier fix that
would apply (`Declined.alternative_tier`, what the CLI prints as "an unsafe fix exists"). Those
files are fixed again at that tier and at `unsafe`, which covers the riskier fixers on the code
they rewrite at a fraction of a second full sweep's time: on 4.57.6 the unsafe output differs from
the safe one in 69 files, all 69 of them swept here (measured against a full unsafe sweep). A
riskier fix that could apply only on the way, to a finding a later safe fix removes, is left to
bench/fix_sweep.py, which sweeps every file at every level."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import transformers
from graphmend.config import Config
from graphmend.rewrite import fix_source
from graphmend.rewrite.engine import FileFix
from graphmend.rewrite.files import fix_file
from graphmend.rewrite.model import Safety

PACKAGE = Path(transformers.__file__).parent
FILES = sorted(PACKAGE.rglob("*.py"))
SHARDS = 4  # parallel test cases, so that pytest-xdist spreads the sweep over its workers


def _problems(path: Path, result: FileFix, level: Safety) -> list[str]:
    if not result.changed:
        return []
    try:
        ast.parse(result.fixed)
    except SyntaxError as exc:
        return [f"{path} ({level.value}): the output does not parse ({exc})"]
    if fix_source(result.fixed, str(path), level=level).fixed != result.fixed:
        return [f"{path} ({level.value}): fixing the output again changes it"]
    return []


def _riskier_levels(result: FileFix) -> list[Safety]:
    """The levels above safe whose fixers apply to a finding the safe run left."""
    tiers = {d.alternative_tier or Safety.UNSAFE for d in result.declined if d.alternative is not None}
    return sorted(tiers | ({Safety.UNSAFE} if tiers else set()), key=list(Safety).index)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_fixing_transformers_never_crashes_always_parses_and_is_idempotent(shard: int) -> None:
    assert transformers.__version__ == "4.57.6" and len(FILES) > 2000
    config = Config()
    problems: list[str] = []
    fixed: dict[Safety, int] = dict.fromkeys(Safety, 0)
    for path in FILES[shard::SHARDS]:
        outcome = fix_file(path, config, level=Safety.SAFE, write=False)  # what `fix --diff` runs
        if outcome.fix is None:
            continue  # not Python text (reported as skipped by the CLI)
        results = {Safety.SAFE: outcome.fix}
        for level in _riskier_levels(outcome.fix):
            riskier = fix_file(path, config, level=level, write=False).fix
            assert riskier is not None
            results[level] = riskier
        for level, result in results.items():
            fixed[level] += result.changed
            problems += _problems(path, result, level)
    assert not problems, "\n".join(problems[:20])
    # each shard holds some of the files every level rewrites (MoE dispatches: costly; flags: unsafe)
    assert fixed[Safety.SAFE] > 10 and fixed[Safety.UNSAFE] > 5, f"the sweep fixed almost nothing: {fixed}"
