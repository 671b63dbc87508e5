"""Property tests: branches built from a small grammar of pure tensor expressions.

For every generated function the rewrite must (1) produce code that parses and is a fixed point,
and when it applies a fix, (2) keep the values and gradients of the original on inputs that reach
every branch, and (3) leave real dynamo one graph with no break. Where the grammar guarantees the
preconditions (floating operands) it must also (4) apply the fix: a fixer that declines everything
would pass (1)-(3).

`exp` is in the grammar because it overflows (`exp(100.0)` is inf in float32): through
`torch.where` the unselected side's gradient would be 0 * inf = NaN, which the original never
computed, unless its argument is masked on that path (the "double where"), as sqrt's and log's are.
"""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from graphmend.rewrite import fix_source
from hypothesis import HealthCheck, assume, event, example, given, note, settings
from hypothesis import strategies as st

from .differential import breaks, callable_of, gradients, run_quietly, same
from .ground_truth import import_case

# Unary forms: each takes one tensor expression.
UNARY = [
    "torch.tanh({0})", "torch.sigmoid({0})", "{0}.abs()", "torch.relu({0})", "torch.sin({0})", "(-{0})",
    "{0}.clamp(min=-1.0)", "({0} + {0}.mean())", "torch.sqrt({0})", "torch.log({0})", "torch.log1p({0})",
    "{0}.double()", "{0}.float()", "{0}.sum()", "{0}.amax()", "torch.softmax({0}, -1)", "torch.exp({0})",
]
BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / {1})"]
WITH_CONSTANT = ["({0} * 0.5)", "({0} + 1.0)", "({0} / 3.0)", "({0} - 2.0)", "(2.0 * {0})"]
RETYPING_MARKERS = (".double()", ".float()", ".sum()", ".amax()")

LEAF = st.sampled_from(["x", "y"])
# 30 keeps the suite fast; GRAPHMEND_PROPERTY_EXAMPLES=500 for a deeper search.
EXAMPLES = int(os.environ.get("GRAPHMEND_PROPERTY_EXAMPLES", "30"))


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda form, a: form.format(a), st.sampled_from(UNARY), inner),
        st.builds(lambda form, a, b: form.format(a, b), st.sampled_from(BINARY), inner, inner),
        st.builds(lambda form, a: form.format(a), st.sampled_from(WITH_CONSTANT), inner),
    )


TENSOR = st.recursive(LEAF, _extend, max_leaves=4)
COMPARISON = st.builds(
    lambda e, reduction, op, c: f"{e}.{reduction}() {op} {c}",
    TENSOR,
    st.sampled_from(["sum", "mean", "max", "min"]),
    st.sampled_from([">", "<", ">=", "<="]),
    st.sampled_from(["0", "0.5", "-1.0", "2.0"]),
)
CONDITION = st.one_of(
    COMPARISON,
    st.builds(lambda a, b: f"{a} and {b}", COMPARISON, COMPARISON),
    st.builds(lambda a, b: f"{a} or {b}", COMPARISON, COMPARISON),
    st.builds(lambda a: f"not {a}", COMPARISON),
)


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, str, bool, str, bool]:
    """(function body, its first condition, whether the fix must apply, the inputs' dtype, whether
    the parameter is annotated as floating)."""
    annotated = draw(st.booleans())
    dtype = draw(st.sampled_from(["float32", "float64"] if annotated else ["float32", "float64", "int64"]))
    form = draw(st.sampled_from(["if-else", "elif", "early-return", "ternary", "update"]))
    first, second = draw(CONDITION), draw(CONDITION)
    a, b, c = draw(TENSOR), draw(TENSOR), draw(TENSOR)
    if form == "if-else":
        body = f"if {first}:\n    z = {a}\nelse:\n    z = {b}\nreturn z"
    elif form == "elif":
        body = f"if {first}:\n    z = {a}\nelif {second}:\n    z = {b}\nelse:\n    z = {c}\nreturn z"
    elif form == "early-return":
        body = f"if {first}:\n    return {a}\nreturn {b}"
    elif form == "ternary":
        body = f"return {a} if {first} else {b}"
    else:
        body = f"if {first}:\n    y = {a}\nreturn y"
    # Casts and full reductions change a branch's dtype or shape: torch.where may then promote.
    retyped = any(m in v for v in (a, b, c) for m in RETYPING_MARKERS)
    # Without the annotation nothing proves `x * 0.5` has the dtype of `x`: declining is allowed.
    return body, first, annotated and not retyped, dtype, annotated


def _module(body: str, dtype: str, annotated: bool) -> str:
    parameter = "x: torch.FloatTensor" if annotated else "x"
    scale = "3.0 * scale" if dtype == "int64" else "scale"
    return (
        f"import torch\n\n\n@torch.compile\ndef f({parameter}):\n    y = x * 2\n"
        + textwrap.indent(body, "    ")
        + "\n\n\ndef inputs():\n"
        "    generator = torch.Generator().manual_seed(0)\n"
        f"    return [((torch.randn(5, generator=generator) * {scale} + offset).to(torch.{dtype}),)\n"
        "            for scale in (0.5, 2.0) for offset in (-2.0, -0.7, 0.0, 0.3, 1.0, 2.5)]\n"
    )


TRACE_TIME_CHECKS = ("_graphmend_same_type(", "_graphmend_one_value(")


def _runs(fn: object, inputs: list[tuple[torch.Tensor]]) -> bool:
    """The original runs on every input (an integer `mean()` raises: such programs are skipped)."""
    try:
        for args in inputs:
            run_quietly(fn, args)
    except (RuntimeError, ValueError, OverflowError):  # int(nan), int(inf): out of the safe fix's domain
        return False
    return True


def _import_pair(factory: pytest.TempPathFactory, source: str, fixed_source: str) -> tuple[Path, Path, Any, Any]:
    """Write the original and the rewrite as modules and import both."""
    directory = factory.mktemp("generated")
    original_file, fixed_file = directory / "original.py", directory / "fixed.py"
    original_file.write_text(source, encoding="utf-8")
    fixed_file.write_text(fixed_source, encoding="utf-8")
    return original_file, fixed_file, import_case(original_file), import_case(fixed_file)


def _outcomes(condition: str, inputs: list[tuple[torch.Tensor]]) -> set[bool]:
    seen = set()
    for (x,) in inputs:
        with torch.no_grad():
            seen.add(bool(eval(condition, {"torch": torch, "x": x, "y": x * 2})))
    return seen


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(program=programs())
# found by this test (stop 60): a Python float bound makes an int64 tensor float32, so the arms differ in dtype
@example(
    program=(
        "if x.sum() > 0:\n    z = x\nelif x.sum() > 0:\n    z = x\nelse:\n    z = x.clamp(min=-1.0)\nreturn z",
        "x.sum() > 0",
        False,
        "int64",
        False,
    )
)
def test_where_rewrites_of_generated_branches_keep_meaning(program: tuple[str, str, bool], tmp_path_factory: pytest.TempPathFactory) -> None:
    body, first, must_fix, dtype, annotated = program
    source = _module(body, dtype, annotated)
    note(source)
    result = fix_source(source, "generated.py")
    ast.parse(result.fixed)
    assert fix_source(result.fixed, "generated.py").fixed == result.fixed, "not a fixed point"
    declined = [(d.key, d.reason) for d in result.declined]
    if must_fix:
        assert result.applied, f"declined: {declined}"
    event("fixed" if result.applied else f"declined: {', '.join(sorted({key for key, _ in declined}))}")
    if not result.applied:
        return
    note(result.fixed)

    original_file, fixed_file, original, fixed = _import_pair(tmp_path_factory, source, result.fixed)
    inputs = original.inputs()
    original_fn, fixed_fn = callable_of(original), callable_of(fixed)
    assume(_runs(original_fn, inputs))
    assume(_outcomes(first, inputs) == {True, False})  # both outcomes of the first branch are reached

    for number, args in enumerate(inputs):
        problems = same(run_quietly(original_fn, args), run_quietly(fixed_fn, args))
        assert not problems, f"input #{number}: {problems}"
        if dtype != "int64":
            problems = same(gradients(original_fn, args), gradients(fixed_fn, args), "gradient")
            assert not problems, f"input #{number}: {problems}"

    _graphs_before, breaks_before = breaks(original_file)
    assert breaks_before >= 1, "the generated original does not break: the harness is wrong"
    if not result.declined:
        if any(check in result.fixed for check in TRACE_TIME_CHECKS):
            # the where runs only where the dtypes/shapes checked while tracing match; elsewhere
            # the original branch runs and breaks as before, never more
            assert breaks(fixed_file)[1] <= breaks_before
        else:
            assert breaks(fixed_file) == (1, 0)


# 0-d sources of a Python number, and what the number feeds.
SOURCES = st.builds(
    lambda e, reduction, cast: f"{e}{cast}.{reduction}()",
    TENSOR,
    st.sampled_from(["sum", "mean", "max", "amax", "min"]),
    st.sampled_from(["", ".double()", ".half()", ".long()"]),
)
OTHER = st.one_of(TENSOR, st.builds(lambda e, r: f"{e}.{r}()", TENSOR, st.sampled_from(["sum", "mean"])))


@st.composite
def scalar_programs(draw: st.DrawFn) -> tuple[str, bool, str, bool]:
    annotated = draw(st.booleans())
    dtype = draw(st.sampled_from(["float32", "float64"] if annotated else ["float32", "float64", "int64"]))
    source, conversion = draw(SOURCES), draw(st.sampled_from(["{}.item()", "float({})", "int({})", "bool({})"]))
    number = conversion.format(source)
    uses = draw(st.lists(st.tuples(OTHER, st.sampled_from(["+", "-", "*", "/"]), st.booleans()), min_size=1, max_size=3))
    terms = [f"({other} {op} s)" if left else f"(s {op} {other})" for other, op, left in uses]
    body = f"s = {number}\nreturn " + " + ".join(terms)
    return body, False, dtype, annotated


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(program=scalar_programs())
def test_scalar_rewrites_of_generated_uses_keep_meaning(program: tuple[str, bool, str, bool], tmp_path_factory: pytest.TempPathFactory) -> None:
    """`.item()`/`float()`/`int()`/`bool()` kept as a 0-d tensor: same values *and dtypes* wherever
    the number flows (a 0-d tensor and a Python number promote differently against 0-d operands)."""
    body, _, dtype, annotated = program
    source = _module(body, dtype, annotated)
    note(source)
    result = fix_source(source, "generated.py", codes=frozenset({"GM201", "GM203"}))
    ast.parse(result.fixed)
    assert fix_source(result.fixed, "generated.py", codes=frozenset({"GM201", "GM203"})).fixed == result.fixed, "not a fixed point"
    event("fixed" if result.applied else f"declined: {', '.join(sorted({d.key for d in result.declined}))}")
    if not result.applied:
        return
    note(result.fixed)
    _original_file, fixed_file, original, fixed = _import_pair(tmp_path_factory, source, result.fixed)
    original_fn, fixed_fn = callable_of(original), callable_of(fixed)
    inputs = original.inputs()
    assume(_runs(original_fn, inputs))
    for number, args in enumerate(inputs):
        problems = same(run_quietly(original_fn, args), run_quietly(fixed_fn, args))
        assert not problems, f"input #{number}: {problems}"
    assert breaks(fixed_file) == (1, 0)
