"""astwalk.py: the faster walk yields what `ast.walk` and `ast.iter_child_nodes` yield, in the
same order (analysis results depend on which node is met first)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from graphmend.astwalk import child_nodes, walk

SOURCES = sorted((Path(__file__).parent / "fixtures").rglob("*.py"))[:60]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_the_same_nodes_in_the_same_order_as_the_standard_library(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    expected = list(ast.walk(tree))
    found = list(walk(tree))
    assert len(found) == len(expected)
    assert all(a is b for a, b in zip(found, expected))
    for node in expected:
        assert child_nodes(node) == list(ast.iter_child_nodes(node))


def test_a_hand_built_node_with_fields_left_unset() -> None:
    call = ast.Call(func=ast.Name(id="f"), args=[ast.Constant(1)])  # no keywords, no ctx on the name
    assert [type(n).__name__ for n in walk(call)] == [type(n).__name__ for n in ast.walk(call)] == ["Call", "Name", "Constant"]
    assert child_nodes(call) == list(ast.iter_child_nodes(call))
