"""Rewrites: the exact output, meaning preserved (differentially, against the original), fewer
graph breaks (real dynamo), idempotence, and a reason for every precondition that declines.

Fixture pairs: tests/fixtures/<fixer>/<case>.in.py -> <case>.out.py. A case module defines
`inputs()` (at least 8 argument tuples that reach every branch outcome) and either a compiled
function `f` or `make()` returning the callable (build modules under a fixed seed so both versions
get the same weights). Optional module constants: `GRAD = True` to compare gradients w.r.t. the
floating inputs, `COSTLY = True` / `UNSAFE = True` to fix at that level (a costly fix must keep
everything a safe one keeps, values up to rounding), `PARTIAL = True` when the rewrite only
reduces the number of breaks.

Decline fixtures: tests/fixtures/declines/*.py, each with a line `# declines: GM101 <key>`: the
fixer must decline that finding with that key, and `graphmend fix` must leave the file unchanged.
"""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest
import torch
from graphmend.analysis import analyze_detailed
from graphmend.rewrite import Declined, Fix, fix_source, plan_fix
from graphmend.rewrite.context import FixContext
from graphmend.rewrite.model import DeclineError, Safety

from .differential import breaks, callable_of, gradients, run_quietly, same
from .ground_truth import import_case
from .observe import differences, observe, run_compiled

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = sorted(p for p in FIXTURES.glob("*/*.in.py") if p.parent.name != "declines")
DECLINES = sorted((FIXTURES / "declines").glob("*.py"))


def fix_level(source: str) -> Safety:
    """The fix level a fixture asks for with `UNSAFE = True` or `COSTLY = True` (else safe)."""
    if "UNSAFE = True" in source:
        return Safety.UNSAFE
    return Safety.COSTLY if "COSTLY = True" in source else Safety.SAFE


@pytest.mark.parametrize("before_path", PAIRS, ids=[f"{p.parent.name}/{p.name[:-6]}" for p in PAIRS])
def test_fix_keeps_meaning_and_removes_breaks(before_path: Path, tmp_path: Path) -> None:
    before = before_path.read_text(encoding="utf-8")
    expected_path = before_path.with_name(before_path.name.replace(".in.py", ".out.py"))
    level = fix_level(before)
    unsafe = level is Safety.UNSAFE
    result = fix_source(before, str(before_path), level=level)
    assert result.applied, f"nothing was fixed; declined: {[(d.key, d.reason) for d in result.declined]}"
    assert result.fixed == expected_path.read_text(encoding="utf-8"), "the rewrite differs from the .out.py fixture"
    assert fix_source(result.fixed, str(expected_path), level=level).fixed == result.fixed, "fixing twice changed the code"
    assert all(level.allows(f.safety) for f in result.applied), "a fix above the fixture's level was applied"

    original_file, fixed_file = tmp_path / "original.py", tmp_path / "fixed.py"
    original_file.write_text(before, encoding="utf-8")
    fixed_file.write_text(result.fixed, encoding="utf-8")
    _graphs_before, breaks_before = breaks(original_file)
    graphs_after, breaks_after = breaks(fixed_file)
    assert breaks_after < breaks_before, f"breaks {breaks_before} -> {breaks_after}"
    if "PARTIAL = True" not in before:
        assert (graphs_after, breaks_after) == (1, 0), f"expected one graph and no break, got {graphs_after} graphs, {breaks_after} breaks"

    original, fixed = import_case(original_file), import_case(fixed_file)
    torch.manual_seed(0)
    original_fn = callable_of(original)
    torch.manual_seed(0)
    fixed_fn = callable_of(fixed)
    inputs = original.inputs()
    assert len(inputs) >= 8, "a fixture needs at least 8 inputs"
    failing = list(getattr(original, "failing_inputs", list)())
    eager_before = []
    for number, args in enumerate(inputs + failing):
        if unsafe:  # an unsafe fix may drop output or checks by design: compare values only
            problems = same(run_quietly(original_fn, args), run_quietly(fixed_fn, args))
        else:
            torch.manual_seed(number)  # a random draw in the code draws the same number in both
            seen_before = observe(original_fn, args)
            eager_before.append(seen_before)
            torch.manual_seed(number)
            seen_after = observe(fixed_fn, args)
            assert (seen_before.error is not None) == (number >= len(inputs)), f"input #{number}: raised {seen_before.error}"
            problems = differences(seen_before, seen_after, same)
        assert not problems, f"input #{number}: {problems}"
        if getattr(original, "GRAD", False) and number < len(inputs):
            torch.manual_seed(number)  # the same random draws in both, as for the outputs
            gradients_before = gradients(original_fn, args)
            torch.manual_seed(number)
            problems = same(gradients_before, gradients(fixed_fn, args), "gradient")
            assert not problems, f"input #{number}: {problems}"
    if not unsafe:
        _compiled_behaviour_is_kept(
            original_fn, fixed_fn, inputs + failing, original_file, fixed_file, partial="PARTIAL = True" in before, eager=eager_before
        )


def _compiled_behaviour_is_kept(  # type: ignore[no-untyped-def]
    original_fn, fixed_fn, inputs, original_file: Path, fixed_file: Path, partial: bool, eager: list | None = None
) -> None:
    """Under torch.compile too: the same observations on every input, and (unless the fix only
    reduces breaks) no break on any of them. Where the compiled original differs from its own
    eager run (dynamo's behaviour: a traced tensor `assert` raises RuntimeError from
    `_assert_async` where Python raised AssertionError), the fixed code may behave as eager did."""
    before = run_compiled(original_fn, inputs, str(original_file))
    after = run_compiled(fixed_fn, inputs, str(fixed_file))
    for number, (a, b) in enumerate(zip(before.observations, after.observations)):
        problems = differences(a, b, same)
        if problems and eager is not None and differences(a, eager[number], same) and not differences(eager[number], b, same):
            problems = []  # dynamo's own deviation from eager, which the fixed code does not have
        assert not problems, f"compiled, input #{number}: {problems}"
    assert before.break_sites, "the original does not break under compile on these inputs"
    if not partial:
        assert not after.break_sites, f"the fixed code still breaks at {sorted(after.break_sites)}"


# `# declines: GM101 key`: no safe fixer rewrites the finding, and `key` is among their reasons;
# `# declines: GM101 key in MaskCheckFixer`: that fixer declines for `key` (another may still fix it).
DECLINE_MARK = re.compile(r"#\s*declines:\s*(GM\d{3})\s+([\w-]+)(?:\s+in\s+(\w+))?")


@pytest.mark.parametrize("path", DECLINES, ids=[p.stem for p in DECLINES])
def test_fixer_declines_with_its_reason(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    match = DECLINE_MARK.search(source)
    assert match, "a decline fixture needs a `# declines: GMxxx key` line"
    code, key, fixer_name = match.groups()
    level = fix_level(source)
    result = analyze_detailed(source, str(path), keep_facts=True)
    ctx = FixContext(result)
    findings = [f for f in result.findings if f.code == code]
    assert findings, f"no {code} finding to decline"
    if fixer_name is not None:
        from graphmend.rewrite.fixers import ALL_FIXERS

        (fixer,) = [f for f in ALL_FIXERS if type(f).__name__ == fixer_name]
        for finding in findings:
            with pytest.raises(DeclineError) as declined:
                fixer.plan(finding, ctx)
            assert declined.value.key == key, f"declined for another reason: {declined.value.reason}"
        return
    outcomes = [plan_fix(f, ctx, level) for f in findings]
    assert all(isinstance(o, Declined) for o in outcomes), "the fixer did not decline"
    keys = {d.key for o in outcomes for d in (o, *o.also)}  # type: ignore[union-attr]
    assert key in keys, f"declined for other reasons: {[(o.key, o.reason) for o in outcomes]}"
    assert fix_source(source, str(path), level=level, codes=frozenset({code})).fixed == source


def test_every_fixer_has_fixtures() -> None:
    from graphmend.rewrite.fixers import ALL_FIXERS

    covered = {p.parent.name for p in PAIRS}
    names = {type(f).__name__ for f in ALL_FIXERS}
    missing = {n for n in names if n not in covered}
    assert not missing, f"fixers without fixture pairs (tests/fixtures/<FixerClassName>/): {sorted(missing)}"


# Keys a fixer raises only on internal trouble (code it cannot locate, a node of the wrong kind)
# or as a guard no fixture should reach (planning nested too deep: test_nesting.py): no user code
# is meant to meet them, so they have no decline fixture.
INTERNAL_DECLINES = frozenset(
    {"no-node", "no-cst-match", "not-an-if", "not-a-while", "not-in-function", "not-a-mask", "unparsable-function", "generated-code", "plan-depth"}
)
DECLINE_RAISE = re.compile(r"\b(?:_decline|_fail|DeclineError)\(\s*\"([\w-]+)\"")


def test_every_precondition_has_a_decline_fixture() -> None:
    rewrite = Path(__file__).resolve().parents[1] / "server" / "graphmend" / "rewrite"
    raised = {key for path in rewrite.rglob("*.py") for key in DECLINE_RAISE.findall(path.read_text(encoding="utf-8"))}
    assert len(raised) > 20, "the pattern no longer finds the fixers' decline calls"
    covered = {m.group(2) for p in DECLINES if (m := DECLINE_MARK.search(p.read_text(encoding="utf-8")))}
    missing = raised - covered - INTERNAL_DECLINES
    assert not missing, f"preconditions without a decline fixture in tests/fixtures/declines/: {sorted(missing)}"


def test_assert_fix_raises_the_same_error_eagerly(tmp_path: Path) -> None:
    """The assert rewrite keeps eager behaviour on a violated assert too (the fixture inputs
    all pass it): the same AssertionError and message."""
    source = (FIXTURES / "AssertScalarFixer" / "lengths.in.py").read_text(encoding="utf-8")
    fixed = fix_source(source, "lengths.py", level=Safety.UNSAFE).fixed
    messages = []
    for name, text in (("original", source), ("fixed", fixed)):
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        fn = callable_of(import_case(path))
        with pytest.raises(AssertionError) as raised:
            fn(torch.randn(2, 4), torch.tensor([0, 3]), types.SimpleNamespace(max_len=4, hard_max=7, pos_max=8))
        messages.append(str(raised.value))
    assert messages == ["empty sequence", "empty sequence"]


def test_a_condition_of_several_values_raises_as_before(tmp_path: Path) -> None:
    """`if t.item() > 0:` with a `t` of two values raised in the original; the rewrite checks the
    condition's size first and runs the original branch there, so the same error, eagerly and
    under compile (the fixture's inputs are all one value)."""
    source = (FIXTURES / "WhereFixer" / "temperature_checked.in.py").read_text(encoding="utf-8")
    fixed = fix_source(source, "temperature_checked.py").fixed
    assert fixed != source
    messages = []
    for name, text in (("original", source), ("fixed", fixed)):
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        module = import_case(path)
        for fn in (callable_of(module), module.f):  # eagerly, then compiled
            torch._dynamo.reset()
            with pytest.raises(RuntimeError) as raised:
                fn(torch.randn(2, 5), torch.tensor([0.5, 2.0]))
            messages.append(str(raised.value).splitlines()[0])
    assert len(set(messages)) == 1 and "2 elements" in messages[0], messages


@pytest.mark.parametrize(
    ("fixture", "args", "message"),
    [
        ("python_division", (torch.randn(2, 3), torch.rand(3), 0), "float division by zero"),
        ("integer_division", (torch.randn(2, 3), torch.ones(3, dtype=torch.long), 0), "division by zero"),
    ],
)
def test_python_division_by_zero_still_raises_after_the_scalar_fix(fixture: str, args: tuple, message: str, tmp_path: Path) -> None:
    """`t.item() / n` raised ZeroDivisionError at n == 0; the number kept as a tensor would give
    inf. The fix guards the divisor, so the same error, with Python's message for a float or an
    integer dividend, comes eagerly and under compile (the fixtures' inputs divide by non-zero counts)."""
    source = (FIXTURES / "ScalarFixer" / f"{fixture}.in.py").read_text(encoding="utf-8")
    fixed = fix_source(source, f"{fixture}.py").fixed
    assert fixed != source
    errors = []
    for name, text in (("original", source), ("fixed", fixed)):
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        eager = callable_of(import_case(path))
        for fn in (eager, torch.compile(eager, backend="eager")):
            with pytest.raises(ZeroDivisionError) as raised:
                run_quietly(fn, args)
            errors.append(str(raised.value))
    assert errors == [message] * 4


@pytest.mark.parametrize("values", [[1.0, 2.0, 3.0], [[1.0, 2.0], [3.0, 4.0]], [7.0]])
def test_unpacking_a_tensor_of_another_shape_raises_as_before(values: list, tmp_path: Path) -> None:
    """`a, b = t.tolist()` kept as `t.unbind(0)` only where `t` holds two values in one dimension;
    with three values, two rows (which `tolist()` unpacks into two lists, then fails to scale) or
    one value, the original `tolist()` runs, eagerly and compiled, and raises what it raised."""
    source = (FIXTURES / "ScalarFixer" / "unpacked_tolist.in.py").read_text(encoding="utf-8")
    fixed = fix_source(source, "unpacked_tolist.py").fixed
    assert "unbind(0)" in fixed
    errors = []
    for name, text in (("original", source), ("fixed", fixed)):
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        eager = callable_of(import_case(path))
        for fn in (eager, torch.compile(eager, backend="eager")):
            torch._dynamo.reset()
            with pytest.raises((ValueError, TypeError, RuntimeError)) as raised:
                run_quietly(fn, (torch.tensor(values),))
            errors.append((type(raised.value).__name__, str(raised.value).splitlines()[0]))
    assert errors[:2] == errors[2:], errors  # eagerly and compiled, the fixed code raises as the original does


@pytest.mark.parametrize(
    "source",
    [
        # a held condition written back into its `if`
        "import torch\n\n\n@torch.compile\ndef f(x, w):\n    total = w.sum().item()\n    # is the total positive?\n"
        "    positive = total > 0\n    if positive:\n        x = x / total\n    return x\n",
        # a selection bound to a name that only a count reads
        "import torch\n\n\n@torch.compile\ndef f(x: torch.FloatTensor):\n    # is the total positive?\n    picked = x[x > 0]\n"
        "    count = picked.size(0)\n    return x.sum() / (count + 1.0)\n",
        # a number chosen by an if/else, whose comments go above the conditional expression
        "import torch\n\n\n@torch.compile\ndef f(x, t):\n    if (t < 0).any():  # is the total positive?\n"
        "        gamma = 0.1\n    else:\n        gamma = 1.0\n    return x * gamma\n",
    ],
)
def test_a_fix_that_removes_a_line_keeps_the_comment_above_it(source: str) -> None:
    result = fix_source(source, "f.py")
    assert result.applied, [(d.key, d.reason) for d in result.declined]
    assert "# is the total positive?\n" in result.fixed
    compile(result.fixed, "f.py", "exec")


def test_a_shape_printed_through_an_ordered_op_stays_in_the_graph_when_sizes_are_symbolic(tmp_path: Path) -> None:
    """`print(..., y.shape, ...)` moved into an ordered op: with sizes traced symbolically (after a
    shape change, or `dynamic=True`) the op gets the shape as text with a slot per size. It used
    to format `str(torch.Size)` while tracing, which broke the graph again, or raised."""
    path = tmp_path / "fixed.py"
    path.write_text((FIXTURES / "OrderedEffectFixer" / "print_values.out.py").read_text(encoding="utf-8"), encoding="utf-8")
    eager, compiled = callable_of(import_case(path)), callable_of(import_case(path))
    inputs = [(torch.randn(3), 0), (torch.randn(5), 1), (torch.randn(2), 2)]
    runs = run_compiled(compiled, inputs, str(path), dynamic=True)
    for number, args in enumerate(inputs):
        torch.manual_seed(number)
        assert not differences(observe(eager, args), runs.observations[number], same), f"input #{number}"
    assert "torch.Size([5])" in runs.observations[1].stdout
    assert not runs.break_sites, sorted(runs.break_sites)


def test_captured_size_needs_no_torch_check(tmp_path: Path) -> None:
    """Why the capture_scalar_outputs fix adds no `torch._check(n >= 0)` for a size: on torch 2.13
    the compiled code asserts the captured size itself, so a negative size raises under compile as
    it does eagerly (measured with inductor, the default backend)."""
    source = (
        "import torch\n\n\n@torch.compile\ndef f(x):\n    n = int(x.sum().item())\n    return torch.zeros(n) + 1\n"
    )
    fixed = fix_source(source, "sizes.py", level=Safety.UNSAFE).fixed
    assert "capture_scalar_outputs = True" in fixed and "_check" not in fixed
    path = tmp_path / "sizes.py"
    path.write_text(fixed, encoding="utf-8")  # importing it sets the flag (conftest restores it)
    eager = callable_of(import_case(path))
    compiled = torch.compile(eager, fullgraph=True)  # fullgraph: the size really is captured, no break
    assert torch.equal(run_quietly(compiled, (torch.full((3,), 1.0),)), torch.ones(3))
    negative = torch.full((3,), -1.0)
    with pytest.raises(RuntimeError):
        run_quietly(eager, (negative,))
    with pytest.raises(RuntimeError):
        run_quietly(compiled, (negative,))


@pytest.mark.parametrize("before_path", PAIRS, ids=[f"{p.parent.name}/{p.name[:-6]}" for p in PAIRS])
def test_fixed_code_compiles_under_inductor(before_path: Path, tmp_path: Path) -> None:
    """"0 breaks" under a counting backend is not "compiles": the fixed code must also go through
    inductor (the default backend) and behave as it does eagerly, on a branch-covering input pair.
    Costly and unsafe fixes too (zamba's and jamba's flag fixes crashed inductor on CUDA); an
    unsafe one is held to its values only, on inputs that do not fail (it may skip output and
    checks under compile by design)."""
    unsafe = fix_level(before_path.read_text(encoding="utf-8")) is Safety.UNSAFE
    fixed_text = before_path.with_name(before_path.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")
    fixed_file = tmp_path / "fixed.py"
    fixed_file.write_text(fixed_text, encoding="utf-8")
    eager_module, compiled_module = import_case(fixed_file), import_case(fixed_file)  # apart: "once" state
    torch.manual_seed(0)
    eager_fn = callable_of(eager_module)
    torch.manual_seed(0)
    compiled_fn = callable_of(compiled_module)
    inputs = eager_module.inputs()
    failing = [] if unsafe else list(getattr(eager_module, "failing_inputs", list)())[:1]
    chosen = [inputs[0], inputs[-1], *failing]
    eager = []
    for number, args in enumerate(chosen):
        torch.manual_seed(number)
        eager.append(observe(eager_fn, args))
    compiled = run_compiled(compiled_fn, chosen[:2], str(fixed_file), backend="inductor")
    # a failing input may break on its way to the error (as the corpus harness counts it: only
    # the normal inputs' breaks are break sites), but must raise the same error compiled
    raising = run_compiled(compiled_fn, chosen[2:], str(fixed_file), backend="inductor", first_seed=2).observations if failing else []
    for number, (a, b) in enumerate(zip(eager, [*compiled.observations, *raising])):
        problems = same(a.output, b.output) if unsafe else differences(a, b, same, autograd_text=False)
        assert not problems, f"inductor, input #{number}: {problems}"
    if "PARTIAL = True" not in before_path.read_text(encoding="utf-8"):
        assert not compiled.break_sites, f"breaks under inductor at {sorted(compiled.break_sites)}"


# A capture flag traces the value, and a Python test on it then breaks instead: the flag fix
# declines there (`flag-moves-break`). Both ways against dynamo: with the flag set by hand the
# break is still there; where the value only feeds traced code, the flag removes it.
FLAG_CASES = [
    ("capture_dynamic_output_shape_ops", "idx = torch.nonzero(x > 0).squeeze(1)\n    if idx.numel() == 0:\n        return x\n    return x[idx] * 2", True),
    ("capture_scalar_outputs", "n = int(x.abs().sum().item()) % 3\n    for _ in range(n):\n        x = x * 2\n    return x", True),
    ("capture_scalar_outputs", "s = x.sum().item()\n    if s > 0:\n        return x + 1\n    return x - 1", True),
    ("capture_dynamic_output_shape_ops", "idx = torch.nonzero(x > 0)\n    return x[idx[:, 0]] * 2", False),
    ("capture_scalar_outputs", "n = int(x.abs().sum().item()) % 3 + 1\n    return torch.zeros(n) + x.sum()", False),
]


@pytest.mark.parametrize(("flag", "body", "moves"), FLAG_CASES, ids=[f"{f[8:14]}-{'moves' if m else 'removes'}-{i}" for i, (f, _, m) in enumerate(FLAG_CASES)])
def test_a_flag_fix_is_offered_only_where_dynamo_stops_breaking(flag: str, body: str, moves: bool, tmp_path: Path) -> None:
    from graphmend.rewrite.fixers import ConfigFlagFixer

    source = f"import torch\n\n\n@torch.compile\ndef f(x):\n    {body}\n\n\ndef inputs():\n    return [(torch.tensor([1.0, -2.0, 3.0]),)]\n"
    result = analyze_detailed(source, "case.py", keep_facts=True)
    ctx = FixContext(result)
    outcomes = []
    for finding in result.findings:
        try:
            outcomes.append(ConfigFlagFixer().plan(finding, ctx))
        except DeclineError as declined:
            outcomes.append(declined.key)
    assert outcomes, "no finding for the flag fixer"
    if moves:
        assert "flag-moves-break" in outcomes and not any(isinstance(o, Fix) for o in outcomes), outcomes
    else:
        assert all(isinstance(o, Fix) for o in outcomes), outcomes
    flagged = tmp_path / "flagged.py"
    flagged.write_text(source.replace("import torch\n", f"import torch\ntorch._dynamo.config.{flag} = True\n", 1), encoding="utf-8")
    _, breaks_left = breaks(flagged)
    assert (breaks_left > 0) == moves, f"with {flag} set dynamo reports {breaks_left} breaks"


def test_reports_stay_in_a_branch_whose_test_cannot_be_evaluated_twice() -> None:
    """Moving the reports at the head of a branch evaluates its test twice (for the reports, then
    for the rest); a test that draws random numbers would draw twice, so the branch is not split:
    the report moves alone and stays under the one test."""
    source = (
        "import warnings\n\nimport torch\n\n\n@torch.compile\ndef f(x):\n"
        "    if (torch.rand(1) < 0.5).any():\n        warnings.warn('dropping')\n        x = x * 0\n    return x + 1\n"
    )
    fixed = fix_source(source, "random_test.py").fixed
    body = fixed[fixed.index("def f(x):") :]
    assert body.count("torch.rand(1)") == 1
    assert "    if (torch.rand(1) < 0.5).any():\n        _graphmend_f_warning()\n        x = x * 0\n" in body


def test_a_fixer_gets_the_node_its_rule_matched() -> None:
    """An expression statement and its call share one span: the finding's anchor picks the node the
    rule reported (the call), not the outermost (the statement)."""
    source = 'import torch\n\n\n@torch.compile\ndef f(x):\n    print("step")\n    return x + 1\n'
    result = analyze_detailed(source, "anchor.py", keep_facts=True)
    (finding,) = [f for f in result.findings if f.code == "GM301"]
    ctx = FixContext(result)
    assert finding.anchor == "Call"
    assert isinstance(ctx.node_for(finding), ast.Call)
    assert isinstance(ctx.node_for(finding, (ast.stmt,)), ast.Expr)  # asked for a statement: still found


BOUND_AFTER_ARITHMETIC = '''import torch


@torch.compile
def f(x: torch.Tensor, y: torch.Tensor):
    n = {number}
    return {use}
'''


@pytest.mark.parametrize(
    ("number", "use"),
    [
        ("y.float().mean().item() * 0.1", "x.double() * n"),  # float64 later: Python's float64 product, not a float32 one
        ("y.float().mean().item() * 0.1", "x.float() * n"),
        ("y.float().mean().item() * 0.1", "x.float().sum() * n"),  # 0-d: the dtype stays float32
        ("max(y.float().abs().mean().item(), 1e-6)", "x.double() / n"),
        ("y.half().mean().item() + 0.1", "x.float() * n"),  # a float16 value: Python's sum is float64, not float16
        ("y.float().abs().mean().item()\n    n = max(n, 1e-6)", "x.double() / n"),  # bound again on the next line
        ("y.float().mean().item()\n    m = n * 2.0 + 1.0\n    n = m", "x.double() * n + x.float().sum() * m"),  # through locals
    ],
)
def test_a_number_bound_after_python_arithmetic_keeps_pythons_value_exactly(number: str, use: str, tmp_path: Path) -> None:
    """`n = t.item() * 0.1` holds a float64 in Python whatever `t`'s dtype: the 0-d tensor bound
    instead must hold that float64 (rounded back to float32 at the binding, 154 of 200 products
    with a float64 tensor differed in their last bits). Compared bit for bit, dtypes included."""
    source = BOUND_AFTER_ARITHMETIC.format(number=number, use=use)
    result = fix_source(source, "bound.py")
    assert [f.finding.code for f in result.applied] == ["GM201"]
    original_file, fixed_file = tmp_path / "original.py", tmp_path / "fixed.py"
    original_file.write_text(source, encoding="utf-8")
    fixed_file.write_text(result.fixed, encoding="utf-8")
    original, fixed = callable_of(import_case(original_file)), callable_of(import_case(fixed_file))
    generator = torch.Generator().manual_seed(0)
    for _ in range(50):
        x, y = torch.randn(5, generator=generator), torch.randn(7, generator=generator) * 1e-3
        expected, got = original(x, y), fixed(x, y)
        assert expected.dtype == got.dtype and torch.equal(expected, got), f"{source}\n->\n{result.fixed}"


def test_a_selection_with_an_else_is_declined_for_the_selections_reason() -> None:
    """`if isnan(a).any(): e = token else: e = fc(a)` tests a mask but fills nothing through it:
    the guarded-fill fixer's "has an else branch" is not its pattern, and the reason shown is the
    selection's own (the values' dtypes and shapes), which says what stands in the way."""
    source = (
        "import torch\n\n\n@torch.compile\ndef f(x, areas, token):\n    if torch.isnan(areas).any():\n"
        "        embed = token\n    else:\n        embed = areas.repeat(1, 2)\n    return x + embed\n"
    )
    result = fix_source(source, "selection_else.py")
    assert len(result.declined) == 1, result.declined
    assert result.declined[0].key == "dtype-shape-unproven", result.declined[0]
