"""Whether a capture flag would remove a break: every use of the captured value must be one
dynamo and inductor trace.

`capture_scalar_outputs` traces `.item()` / `int(t)` / a tensor used as a size as an unbacked
symbolic number, and `capture_dynamic_output_shape_ops` traces `nonzero`, boolean masks and
`unique` with an unbacked size. What happens next depends on the uses. A Python test on such a
number or size (`if n > 0:`, `while`, `range(n)`, `for row in idx:`, `if idx.numel() == 0:`)
breaks there instead ("generic_jump SymNodeVariable", measured on torch 2.13); other code fails to
compile or crashes inductor (the held-out corpus: a fake-tensor error, an inductor "wrong number
of dimensions" assertion). So the flag is offered only where each use is in a short list of
forms known to trace: arithmetic, tensor methods and `torch` functions, indexing a tensor, a size
of a `torch` factory or a slice bound, `.shape`/`.size()`/`len()` of a followed tensor, an
`assert` or `torch._check`, a `return`. Anything else (a call into user code or a module, a
container, formatting, a Python test) is not proven, and the decline names it.

Values are followed through the function by name, forward in source order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis.kinds import TENSOR_KINDS
from ..astwalk import walk
from ..quoting import excerpt
from .context import FixContext

_NUMBER_CALLS = frozenset({"builtins.int", "builtins.float", "builtins.abs", "builtins.round", "builtins.min", "builtins.max", "builtins.len"})
_SIZE_ATTRIBUTES = frozenset({"shape"})
_SIZE_METHODS = frozenset({"size", "numel", "dim"})
_BREAKING_METHODS = frozenset({"item", "tolist", "numpy", "cpu", "__bool__"})  # out of the graph again


@dataclass(frozen=True)
class BreakingUse:
    """A use of a captured value that is not proven to trace."""

    line: int
    code: str  # the statement's first line, for the decline message


def breaking_use(ctx: FixContext, captured: ast.AST, flag: str) -> BreakingUse | None:
    """The first use of `captured` (a `.item()` call, a `nonzero`...) in its function that is
    not proven to trace with `flag` set, if any."""
    function = ctx.function_of(captured)
    if function is None:
        return None
    followed: set[str] = set()
    pending: list[ast.AST] = [captured]
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        verdict = _use(ctx, node, followed)
        if isinstance(verdict, BreakingUse):
            return verdict
        for name in verdict:
            if name in followed:
                continue
            followed.add(name)
            end = ctx.statement_of(node)
            after = (end.end_lineno or end.lineno) if end is not None else 0
            pending.extend(
                n for n in walk(function)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > after
            )
    return None


def _use(ctx: FixContext, node: ast.AST, followed: set[str]) -> BreakingUse | set[str]:
    """Climb from a captured value through the expression that uses it: the names it ends up
    bound to (to follow further), or the use that is not proven."""
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            child = parent
            continue
        if isinstance(parent, ast.Attribute):
            if parent.attr in _SIZE_ATTRIBUTES or (isinstance(ctx.parent(parent), ast.Call) and ctx.parent(parent).func is parent):  # type: ignore[union-attr]
                child = parent
                continue
            return _unproven(ctx, parent)
        if isinstance(parent, ast.Call):
            if parent.func is child:  # a method of the value: `idx.float()`, `idx.shape[0]` went above
                method = child.attr if isinstance(child, ast.Attribute) else ""
                if method in _BREAKING_METHODS:
                    return _unproven(ctx, parent)
                child = parent
                continue
            name = ctx.qualname(parent.func) or ""
            if name.startswith("torch.") or name in _NUMBER_CALLS or _tensor_method(ctx, parent):
                child = parent
                continue
            return _unproven(ctx, parent)  # user code, a module, print, range...
        if isinstance(parent, ast.keyword):
            child = parent
            continue
        if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(ctx.parent(parent), ast.Return):
            return set()  # returned among other values
        if isinstance(parent, (ast.Subscript, ast.Slice, ast.Tuple)) and _inside_tensor_subscript(ctx, parent):
            child = parent
            continue
        if isinstance(parent, ast.Compare):
            if _checked(ctx, parent):
                return set()
            return _unproven(ctx, parent)
        if isinstance(parent, ast.Assign) and parent.value is child:
            if all(isinstance(t, ast.Name) for t in parent.targets):
                return {t.id for t in parent.targets if isinstance(t, ast.Name)}
            return _unproven(ctx, parent)
        if isinstance(parent, (ast.Return, ast.Assert)) or (isinstance(parent, ast.Expr) and parent.value is child):
            return set()  # returned, asserted (traced as a runtime check), or a call made for its effect on tensors
        return _unproven(ctx, parent)
    return set()


def _tensor_method(ctx: FixContext, call: ast.Call) -> bool:
    """`x.index_select(0, idx)`, `out.index_add_(0, idx, v)`: a method of a tensor (the analysis's kinds)."""
    return isinstance(call.func, ast.Attribute) and ctx.kind(call.func.value) in TENSOR_KINDS


def _inside_tensor_subscript(ctx: FixContext, node: ast.AST) -> bool:
    """Part of the index of a tensor subscript (`x[idx]`, `x[:n]`, `x[idx, 0]`), or the tensor
    being indexed."""
    current = node
    while not isinstance(current, ast.Subscript):
        current = ctx.parent(current)  # type: ignore[assignment]
        if current is None or isinstance(current, ast.stmt):
            return False
    return ctx.kind(current.value) in TENSOR_KINDS or ctx.kind(current) in TENSOR_KINDS


def _checked(ctx: FixContext, compare: ast.Compare) -> bool:
    """A comparison in an `assert` or a `torch._check(...)`: traced as a runtime check."""
    for ancestor in ctx.ancestors(compare):
        if isinstance(ancestor, ast.Assert):
            return True
        if isinstance(ancestor, ast.Call) and (ctx.qualname(ancestor.func) or "").startswith("torch._check"):
            return True
        if isinstance(ancestor, ast.stmt):
            return False
    return False


def _unproven(ctx: FixContext, node: ast.AST) -> BreakingUse:
    statement = ctx.statement_of(node) or node
    return BreakingUse(getattr(statement, "lineno", 0), excerpt(ctx.code(statement).splitlines()[0], 60))
