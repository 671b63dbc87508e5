"""Where a capture flag would only move a break: the Python-level uses of a captured value.

`capture_scalar_outputs` traces `.item()` / `int(t)` as an unbacked symbolic number and
`capture_dynamic_output_shape_ops` traces `nonzero`, boolean masks and `unique` with an unbacked
size. Dynamo still cannot decide a Python test on such a number or size: `if n > 0:`,
`while`, `range(n)`, `for row in idx:`, `if idx.numel() == 0:` break at the test instead
(measured on torch 2.13: "generic_jump SymNodeVariable", "Could not extract specialized integer
from data-dependent expression"). Arithmetic on the number, sizes, slices, indexing and asserts
are traced. So the flag fix is offered only where no captured value reaches such a use; the
decline names the use.

Values are followed through the function by name, forward in source order: a number through
arithmetic and `int`/`float`/`round`/`abs`/`min`/`max`, a tensor of unbacked size through
reshaping and indexing methods, and its sizes (`.shape`, `.size()`, `.numel()`, `len()`) as
numbers. A tensor computed from a captured number is not followed: a test on it is a tensor
branch, reported as its own finding.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis.symbols import SCALAR_FLAG, SHAPE_FLAG
from .context import FixContext

_NUMBER_CALLS = frozenset({"int", "float", "round", "abs", "min", "max", "bool"})
# tensor methods that keep the unbacked size in the result's shape
_SHAPE_KEEPING = frozenset(
    {"squeeze", "unsqueeze", "view", "reshape", "flatten", "t", "to", "long", "int", "float", "contiguous", "clone", "detach", "unbind"}
)
_SIZE_METHODS = frozenset({"size", "numel", "dim"})


@dataclass(frozen=True)
class BreakingUse:
    """A Python-level use of a captured value that dynamo would still break on."""

    line: int
    code: str  # the statement's first line, for the decline message


def breaking_use(ctx: FixContext, captured: ast.AST, flag: str) -> BreakingUse | None:
    """The first use of `captured` (a `.item()` call, a `nonzero`...) in its function that would
    still break with `flag` set, if any."""
    function = ctx.function_of(captured)
    if function is None:
        return None
    numbers: set[str] = set()  # names holding a captured number (or an unbacked size)
    tensors: set[str] = set()  # names holding a tensor of unbacked size
    statement = ctx.statement_of(captured)
    direct = _direct_use(ctx, captured, flag)
    if direct is not None:
        return direct
    if statement is not None:
        _bind(statement, captured, flag, numbers, tensors)
    later = sorted(
        (n for n in ast.walk(function) if isinstance(n, ast.stmt) and statement is not None and n.lineno > (statement.end_lineno or statement.lineno)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for node in later:
        use = _test_use(ctx, node, numbers, tensors)
        if use is not None:
            return use
        if isinstance(node, ast.Assign):
            value = node.value
            if _is_number(value, numbers, tensors):
                numbers |= _target_names(node)
            elif _is_shaped_tensor(value, tensors):
                tensors |= _target_names(node)
    return None


def _direct_use(ctx: FixContext, captured: ast.AST, flag: str) -> BreakingUse | None:
    """The captured value tested where it is made: `if t.item() > 0:`, `for i in x.nonzero():`."""
    child = captured
    for parent in ctx.ancestors(captured):
        if isinstance(parent, (ast.If, ast.While)) and parent.test is child:
            return _use(ctx, parent)
        if isinstance(parent, ast.IfExp) and parent.test is child:
            return _use(ctx, parent)
        if isinstance(parent, ast.For) and parent.iter is child and flag == SHAPE_FLAG:
            return _use(ctx, parent)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "range" and flag == SCALAR_FLAG:
            return _use(ctx, parent)
        if isinstance(parent, ast.stmt):
            return None
        if not isinstance(parent, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Call)):
            return None
        if isinstance(parent, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
            return None
        child = parent
    return None


def _bind(statement: ast.stmt, captured: ast.AST, flag: str, numbers: set[str], tensors: set[str]) -> None:
    """The names the captured value's own statement binds it to."""
    if not isinstance(statement, ast.Assign):
        return
    value = statement.value
    if flag == SCALAR_FLAG and _contains(value, captured) and _is_number(value, {"<captured>"}, set(), captured):
        numbers |= _target_names(statement)
    elif flag == SHAPE_FLAG and _contains(value, captured):
        tensors |= _target_names(statement)


def _test_use(ctx: FixContext, node: ast.stmt, numbers: set[str], tensors: set[str]) -> BreakingUse | None:
    """A test, loop or `range()` in this statement (not in nested statements) on a followed value."""
    tests: list[ast.expr] = []
    if isinstance(node, (ast.If, ast.While)):
        tests.append(node.test)
    if isinstance(node, ast.For):
        if _is_shaped_tensor(node.iter, tensors):
            return _use(ctx, node)
        tests.append(node.iter)
    own = [node.test] if isinstance(node, (ast.If, ast.While)) else [node.iter] if isinstance(node, ast.For) else [
        child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)
    ]
    for expr in own:
        for sub in ast.walk(expr):
            if isinstance(sub, ast.IfExp):
                tests.append(sub.test)
            elif isinstance(sub, ast.BoolOp):
                tests.extend(sub.values[:-1])  # `a and b` tests `a`
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "range":
                if any(_is_number(arg, numbers, tensors) for arg in sub.args):
                    return _use(ctx, node)
    for test in tests:
        if _reads_number(test, numbers, tensors):
            return _use(ctx, node)
    return None


def _reads_number(test: ast.expr, numbers: set[str], tensors: set[str]) -> bool:
    """Whether a test reads a followed number or size (identity tests excepted)."""
    for sub in ast.walk(test):
        if isinstance(sub, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in sub.ops):
            continue
        if isinstance(sub, ast.Name) and sub.id in numbers:
            return True
        if _is_size(sub, tensors):
            return True
    return False


def _is_number(expr: ast.AST, numbers: set[str], tensors: set[str], captured: ast.AST | None = None) -> bool:
    """A Python number computed from a followed one (or from the captured call itself)."""
    if captured is not None and expr is captured:
        return True
    if isinstance(expr, ast.Name):
        return expr.id in numbers
    if _is_size(expr, tensors):
        return True
    if isinstance(expr, ast.BinOp):
        return _is_number(expr.left, numbers, tensors, captured) or _is_number(expr.right, numbers, tensors, captured)
    if isinstance(expr, ast.UnaryOp):
        return _is_number(expr.operand, numbers, tensors, captured)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in _NUMBER_CALLS:
        return any(_is_number(arg, numbers, tensors, captured) for arg in expr.args)
    return False


def _is_size(expr: ast.AST, tensors: set[str]) -> bool:
    """`x.shape`, `x.shape[0]`, `x.size(0)`, `x.numel()`, `len(x)` of a tensor of unbacked size."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Attribute) and expr.attr == "shape":
        return _is_shaped_tensor(expr.value, tensors)
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _SIZE_METHODS:
            return _is_shaped_tensor(expr.func.value, tensors)
        if isinstance(expr.func, ast.Name) and expr.func.id == "len" and expr.args:
            return _is_shaped_tensor(expr.args[0], tensors)
    return False


def _is_shaped_tensor(expr: ast.AST, tensors: set[str]) -> bool:
    """A followed tensor, or one made from it by a method that keeps its size, or a row slice of it."""
    if isinstance(expr, ast.Name):
        return expr.id in tensors
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _SHAPE_KEEPING:
        return _is_shaped_tensor(expr.func.value, tensors)
    if isinstance(expr, ast.Subscript):
        return _is_shaped_tensor(expr.value, tensors)
    return False


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


def _target_names(statement: ast.Assign) -> set[str]:
    return {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _use(ctx: FixContext, node: ast.AST) -> BreakingUse:
    return BreakingUse(getattr(node, "lineno", 0), ctx.code(node).splitlines()[0].strip()[:60])
