"""What generated code needs: names the function does not use, and blank lines without the
indentation libcst would leave on them."""

from __future__ import annotations

import ast

import libcst as cst

from ...astwalk import walk


def flush_blank_lines(statement: cst.CSTNode) -> cst.CSTNode:
    """Blank lines in generated code carry no indentation (no trailing whitespace)."""

    class Flush(cst.CSTTransformer):
        def leave_EmptyLine(self, original: cst.EmptyLine, updated: cst.EmptyLine) -> cst.EmptyLine:
            return updated.with_changes(indent=False) if updated.comment is None else updated

    flushed = statement.visit(Flush())
    assert isinstance(flushed, cst.CSTNode)  # the transformer removes nothing
    return flushed


def fresh_name(function: ast.AST, base: str) -> str:
    """A name the function does not use anywhere."""
    used = {n.id for n in walk(function) if isinstance(n, ast.Name)}
    used |= {n.name for n in walk(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    used |= {a.arg for n in walk(function) if isinstance(n, ast.arguments) for a in n.args + n.kwonlyargs + n.posonlyargs}
    candidate, number = base, 1
    while candidate in used:
        number += 1
        candidate = f"{base}_{number}"
    return candidate
