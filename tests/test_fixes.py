"""Rewrites: the exact output, meaning preserved (differentially, against the original), fewer
graph breaks (real dynamo), idempotence, and a reason for every precondition that declines.

Fixture pairs: tests/fixtures/<fixer>/<case>.in.py -> <case>.out.py. A case module defines
`inputs()` (at least 8 argument tuples that reach every branch outcome) and either a compiled
function `f` or `make()` returning the callable (build modules under a fixed seed so both versions
get the same weights). Optional module constants: `GRAD = True` to compare gradients w.r.t. the
floating inputs, `UNSAFE = True` to apply unsafe fixes, `PARTIAL = True` when the rewrite only
reduces the number of breaks.

Decline fixtures: tests/fixtures/declines/*.py, each with a line `# declines: GM101 <key>`: the
fixer must decline that finding with that key, and `graphmend fix` must leave the file unchanged.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from graphmend.analysis import analyze_detailed
from graphmend.rewrite import Declined, fix_source, plan_fix
from graphmend.rewrite.context import FixContext
from graphmend.runtime.worker import capture

from .ground_truth import import_case

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = sorted(p for p in FIXTURES.glob("*/*.in.py") if p.parent.name != "declines")
DECLINES = sorted((FIXTURES / "declines").glob("*.py"))


def _callable(module: Any) -> Any:
    fn = module.make() if hasattr(module, "make") else module.f
    fn = getattr(fn, "_torchdynamo_orig_callable", fn)
    return getattr(fn, "_orig_mod", fn)


def _same(a: Any, b: Any, path: str = "output") -> list[str]:
    if isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return [f"{path}: {type(a).__name__} of {len(a)} vs {b!r}"]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in _same(x, y, f"{path}[{i}]")]
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{path}: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}"]
        if not torch.allclose(a.double(), b.double(), atol=1e-6, rtol=1e-5, equal_nan=True):
            return [f"{path}: values differ, max abs diff {(a.double() - b.double()).abs().nan_to_num(0).max().item():.3g}"]
        return []
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def _run(fn: Any, args: tuple) -> Any:
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _gradients(fn: Any, args: tuple) -> list[Any]:
    leaves = tuple(a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
    output = _run(fn, leaves)
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    total = sum(o.sum() for o in outputs if isinstance(o, torch.Tensor) and o.is_floating_point())
    total.backward()
    return [leaf.grad for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]


def _breaks(path: Path) -> tuple[int, int]:
    import torch._dynamo.config as dynamo_config

    snapshot = dynamo_config.get_config_copy()
    try:
        module = import_case(path)
        fn = _callable(module)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            result = capture(fn, module.inputs()[0])
        assert result["error"] is None, result["error"]
        return result["graphs"], len([b for b in result["breaks"] if not b["duplicate"]])
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dynamo_config.load_config(snapshot)


@pytest.mark.parametrize("before_path", PAIRS, ids=[f"{p.parent.name}/{p.name[:-6]}" for p in PAIRS])
def test_fix_keeps_meaning_and_removes_breaks(before_path: Path, tmp_path: Path) -> None:
    before = before_path.read_text(encoding="utf-8")
    expected_path = before_path.with_name(before_path.name.replace(".in.py", ".out.py"))
    unsafe = "UNSAFE = True" in before
    result = fix_source(before, str(before_path), unsafe=unsafe)
    assert result.applied, f"nothing was fixed; declined: {[(d.key, d.reason) for d in result.declined]}"
    assert result.fixed == expected_path.read_text(encoding="utf-8"), "the rewrite differs from the .out.py fixture"
    assert fix_source(result.fixed, str(expected_path), unsafe=unsafe).fixed == result.fixed, "fixing twice changed the code"

    original_file, fixed_file = tmp_path / "original.py", tmp_path / "fixed.py"
    original_file.write_text(before, encoding="utf-8")
    fixed_file.write_text(result.fixed, encoding="utf-8")
    graphs_before, breaks_before = _breaks(original_file)
    graphs_after, breaks_after = _breaks(fixed_file)
    assert breaks_after < breaks_before, f"breaks {breaks_before} -> {breaks_after}"
    if "PARTIAL = True" not in before:
        assert (graphs_after, breaks_after) == (1, 0), f"expected one graph and no break, got {graphs_after} graphs, {breaks_after} breaks"

    original, fixed = import_case(original_file), import_case(fixed_file)
    torch.manual_seed(0)
    original_fn = _callable(original)
    torch.manual_seed(0)
    fixed_fn = _callable(fixed)
    inputs = original.inputs()
    assert len(inputs) >= 8, "a fixture needs at least 8 inputs"
    for number, args in enumerate(inputs):
        problems = _same(_run(original_fn, args), _run(fixed_fn, args))
        assert not problems, f"input #{number}: {problems}"
        if getattr(original, "GRAD", False):
            problems = _same(_gradients(original_fn, args), _gradients(fixed_fn, args), "gradient")
            assert not problems, f"input #{number}: {problems}"


DECLINE_MARK = re.compile(r"#\s*declines:\s*(GM\d{3})\s+([\w-]+)")


@pytest.mark.parametrize("path", DECLINES, ids=[p.stem for p in DECLINES])
def test_fixer_declines_with_its_reason(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    match = DECLINE_MARK.search(source)
    assert match, "a decline fixture needs a `# declines: GMxxx key` line"
    code, key = match.groups()
    unsafe = "UNSAFE = True" in source
    result = analyze_detailed(source, str(path), keep_facts=True)
    ctx = FixContext(result)
    outcomes = [plan_fix(f, ctx, unsafe=unsafe) for f in result.findings if f.code == code]
    assert outcomes, f"no {code} finding to decline"
    assert all(isinstance(o, Declined) for o in outcomes), "the fixer did not decline"
    assert key in {o.key for o in outcomes}, f"declined for other reasons: {[(o.key, o.reason) for o in outcomes]}"
    assert fix_source(source, str(path), unsafe=unsafe, codes=frozenset({code})).fixed == source


def test_every_fixer_has_fixtures() -> None:
    from graphmend.rewrite.fixers import ALL_FIXERS

    covered = {p.parent.name for p in PAIRS}
    names = {type(f).__name__ for f in ALL_FIXERS}
    missing = {n for n in names if n not in covered}
    assert not missing, f"fixers without fixture pairs (tests/fixtures/<FixerClassName>/): {sorted(missing)}"
