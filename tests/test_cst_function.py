"""A function's libcst nodes are found and its edits rendered one body statement at a time: the
nodes and the edits must be exactly those that working on the whole function gives."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from graphmend.findings import Span
from graphmend.rewrite.cst_function import parse_function
from graphmend.textedits import apply_edits, changed_lines_edit
from libcst.metadata import MetadataWrapper, PositionProvider

SOURCE = '''import torch


class Block(torch.nn.Module):
    def forward(self, x, mask=None):
        # a comment that libcst gives to the statement below
        y = x.relu(); z = y + 1  # two statements on one line
        if mask is not None:
            print("masked",
                  mask.sum())  # a continuation line keeps its own columns
        else:
          print("odd indentation")
        text = """a string
that runs to column 0
"""

        @torch.no_grad()
        def inner(t):
            return t * 2
        for step in range(3):
            if step:
                y = inner(y)
        return y + z
'''


def _function(tree: ast.Module) -> ast.FunctionDef:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")


def _whole_function_positions(parsed_text: str, first_line: int, prefix: str) -> dict[tuple[int, int, int, int], list[int]]:
    """Node types by span from resolving the whole function (the reference)."""
    module = cst.parse_module(prefix + parsed_text)
    shift = first_line - 1 - (1 if prefix else 0)
    found: dict[tuple[int, int, int, int], list[int]] = {}
    for node, where in MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider).items():
        key = (where.start.line + shift, where.start.column, where.end.line + shift, where.end.column)
        found.setdefault(key, []).append(type(node).__name__)  # type: ignore[arg-type]
    return found


def test_every_node_of_the_body_is_found_as_on_the_whole_function() -> None:
    tree = ast.parse(SOURCE)
    function = _function(tree)
    parsed = parse_function(SOURCE.split("\n"), function)
    reference = _whole_function_positions(parsed.text, parsed.first_line, parsed.prefix)
    checked = 0
    for statement in function.body:
        for node in ast.walk(statement):
            if not hasattr(node, "end_lineno") or node.end_lineno is None:
                continue
            span = Span(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
            key = (span.start_line, span.start_col, span.end_line, span.end_col)
            assert [type(n).__name__ for n in parsed.nodes_at(span)] == reference.get(key, []), ast.dump(node)[:80]
            checked += 1
    assert checked > 40
    # found statement by statement, each rendered alone exactly as in the file (none fell back)
    assert len(parsed.statements) == 6
    assert all(s.exact and s.by_span is not None for s in parsed.statements)


@pytest.mark.parametrize("name", ["mask", "y", "inner", "step", "z"])
def test_an_edit_is_the_one_the_whole_function_gives(name: str) -> None:
    tree = ast.parse(SOURCE)
    function = _function(tree)
    parsed = parse_function(SOURCE.split("\n"), function)
    targets = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name]
    replacements: dict[cst.CSTNode, cst.CSTNode] = {}
    for target in targets:
        span = Span(target.lineno, target.col_offset, target.end_lineno or target.lineno, target.end_col_offset or 0)
        node = next(n for n in parsed.nodes_at(span) if isinstance(n, cst.Name))
        replacements[node] = cst.Name(name + "_renamed")
    assert replacements
    edit = parsed.rewrite(replacements)

    class Replace(cst.CSTTransformer):
        def on_leave(self, original, updated):  # type: ignore[no-untyped-def]
            return replacements.get(original, updated)

    whole = parsed.module.visit(Replace()).code[len(parsed.prefix) :]
    expected = changed_lines_edit(parsed.first_line, parsed.text.split("\n"), whole.split("\n"))
    assert edit == expected
    fixed = apply_edits(SOURCE, [edit])
    ast.parse(fixed)
    assert fixed.count(name + "_renamed") == len(targets)


def test_a_body_statement_replaced_whole_keeps_the_lines_around_it() -> None:
    tree = ast.parse(SOURCE)
    function = _function(tree)
    parsed = parse_function(SOURCE.split("\n"), function)
    loop = next(s for s in function.body if isinstance(s, ast.For))
    span = Span(loop.lineno, loop.col_offset, loop.end_lineno or loop.lineno, loop.end_col_offset or 0)
    node = next(n for n in parsed.nodes_at(span) if isinstance(n, cst.For))
    edit = parsed.rewrite({node: cst.parse_statement("y = torch.stack([y, y])\n")})
    fixed = apply_edits(SOURCE, [edit])
    assert "        y = torch.stack([y, y])\n        return y + z\n" in fixed
    assert "def inner(t):\n            return t * 2\n        y = torch.stack" in fixed
