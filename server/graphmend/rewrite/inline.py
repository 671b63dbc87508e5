"""Inline a branch's assignments into the return that ends it, so the branch is one `return`.

`if c: y = x * w; return y.relu()` selects like `if c: return (x * w).relu()`, a form the Where
fixer rewrites. The two are the same program when each name assigned in the branch is read once
afterwards in the branch (or its value is a name or a number: reading it twice costs nothing), no
value reads a name the branch assigns after it, and no name is assigned twice. The branch
returns, so its bindings are never seen after the `if`.
"""

from __future__ import annotations

import ast

from ..astwalk import walk
from ..findings import Edit, Span
from .context import FixContext


def inlined_return_edits(ctx: FixContext, statement: ast.If) -> list[Edit]:
    """Edits turning each branch of `statement` (an if/elif/else chain) that assigns names and
    then returns into a single `return`; empty when no branch needs it or one cannot be inlined."""
    edits: list[Edit] = []
    for body in _bodies(statement):
        if len(body) < 2 or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            continue
        text = _inlined(ctx, body)
        if text is None:
            return []
        first, last = body[0], body[-1]
        span = Span(first.lineno, first.col_offset, last.end_lineno or last.lineno, last.end_col_offset or 0)
        edits.append(Edit(span, f"return {text}"))
    return edits


def _bodies(statement: ast.If) -> list[list[ast.stmt]]:
    bodies = [statement.body]
    current = statement
    while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
        current = current.orelse[0]
        bodies.append(current.body)
    if current.orelse:
        bodies.append(current.orelse)
    return bodies


def _inlined(ctx: FixContext, body: list[ast.stmt]) -> str | None:
    """The returned expression with the assignments before it substituted, or None."""
    assignments = body[:-1]
    targets: list[str] = []
    for stmt in assignments:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return None
        targets.append(stmt.targets[0].id)
    if len(set(targets)) != len(targets):
        return None
    values: dict[str, str] = {}
    for position, stmt in enumerate(assignments):
        assert isinstance(stmt, ast.Assign)
        name, value = targets[position], stmt.value
        later_targets = set(targets[position + 1 :])
        if any(isinstance(n, ast.Name) and n.id in later_targets for n in walk(value)):
            return None  # it reads a name the branch assigns later: substituting would read the new value
        later = [*assignments[position + 1 :], body[-1]]
        reads = sum(1 for s in later for n in walk(s) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))
        cheap = isinstance(value, (ast.Name, ast.Constant, ast.Attribute))
        if reads == 0 or (reads > 1 and not cheap):
            return None
        values[name] = _substituted(ctx, value, values)
    final = body[-1]
    assert isinstance(final, ast.Return) and final.value is not None
    returned = final.value
    return _substituted(ctx, returned, values)


def _substituted(ctx: FixContext, node: ast.expr, values: dict[str, str]) -> str:
    """`node`'s source with each read of a name in `values` replaced by its (parenthesised) value."""
    reads = {id(n): f"({values[n.id]})" for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in values}
    return ctx.code_with(node, reads)
