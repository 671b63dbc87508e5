"""The quick fix that names a function compiled: one insertion into pyproject.toml, verified by
reading the result back as GraphMend's configuration (compiled_entries.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from graphmend.compiled_entries import apply_insertion, compiled_entry_insertion, entry_for, nearest_pyproject

ENTRY = "src/losses.py:focal"


def _compiled(text: str) -> list[str]:
    return tomllib.loads(text)["tool"]["graphmend"]["compiled"]


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param("", '[tool.graphmend]\ncompiled = ["src/losses.py:focal"]\n', id="empty-file"),
        pytest.param(
            '[project]\nname = "x"\n',
            '[project]\nname = "x"\n\n[tool.graphmend]\ncompiled = ["src/losses.py:focal"]\n',
            id="no-table",
        ),
        pytest.param(
            '[project]\nname = "x"',
            '[project]\nname = "x"\n\n[tool.graphmend]\ncompiled = ["src/losses.py:focal"]\n',
            id="no-final-newline",
        ),
        pytest.param(
            '[tool.graphmend]  # ours\nselect = ["GM1"]\n\n[tool.ruff]\nline-length = 100\n',
            '[tool.graphmend]  # ours\ncompiled = ["src/losses.py:focal"]\nselect = ["GM1"]\n\n[tool.ruff]\nline-length = 100\n',
            id="table-without-key",
        ),
        pytest.param(
            '[tool.graphmend]\ncompiled = [\n    "a.py:f",  # the loss\n]\n',
            '[tool.graphmend]\ncompiled = [\n    "src/losses.py:focal",\n    "a.py:f",  # the loss\n]\n',
            id="multi-line-array",
        ),
        pytest.param(
            '[tool.graphmend]\ncompiled = [  # compiled in train.py\n    "a.py:f",\n]\n',
            '[tool.graphmend]\ncompiled = [  # compiled in train.py\n    "src/losses.py:focal",\n    "a.py:f",\n]\n',
            id="comment-after-bracket",
        ),
        pytest.param('[tool.graphmend]\ncompiled = []\n', '[tool.graphmend]\ncompiled = ["src/losses.py:focal"]\n', id="empty-array"),
    ],
)
def test_the_entry_is_inserted_and_the_rest_kept(before: str, after: str) -> None:
    insertion = compiled_entry_insertion(before, ENTRY)
    assert insertion is not None
    assert apply_insertion(before, insertion) == after
    assert ENTRY in _compiled(after)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('[tool.graphmend]\ncompiled = ["src/losses.py:focal"]\n', id="already-listed"),
        pytest.param("[tool.graphmend\n", id="does-not-parse"),
        pytest.param('[tool]\ngraphmend.compiled = ["a.py:f"]\n', id="dotted-keys"),
        pytest.param('tool = { graphmend = { select = ["GM1"] } }\n', id="inline-table"),
        pytest.param('[tool.graphmend]\ncompiled = "a.py:f"\n', id="not-an-array"),
    ],
)
def test_nothing_is_offered_where_the_shape_is_not_edited_safely(text: str) -> None:
    assert compiled_entry_insertion(text, ENTRY) is None


def test_the_entry_names_the_file_relative_to_the_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    document = tmp_path / "src" / "losses.py"
    document.parent.mkdir()
    document.write_text("", encoding="utf-8")
    assert nearest_pyproject(document) == (tmp_path / "pyproject.toml").resolve()
    assert entry_for(document, tmp_path / "pyproject.toml", "Sampler.step") == "src/losses.py:Sampler.step"
    assert entry_for(Path("/elsewhere/x.py"), tmp_path / "pyproject.toml", "f") is None


def test_the_quick_fix_edits_the_pyproject_whose_table_is_in_force(tmp_path: Path) -> None:
    """A subproject's pyproject.toml without a table: adding one there would hide the root's
    `[tool.graphmend]` for every file below it, so the entry goes into the root's."""
    from graphmend.lsp.actions import compiled_entry_action
    from lsprotocol import types
    from pygls.workspace.position_codec import PositionCodec

    (tmp_path / "pyproject.toml").write_text('[tool.graphmend]\nignore = ["GM301"]\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "sub"\n', encoding="utf-8")
    document = tmp_path / "sub" / "losses.py"
    diagnostic = types.Diagnostic(range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)), message="m")
    action = compiled_entry_action("focal", str(document), diagnostic, PositionCodec(types.PositionEncodingKind.Utf16), tmp_path)
    assert action is not None and action.edit is not None and action.edit.changes is not None
    assert list(action.edit.changes) == [(tmp_path / "pyproject.toml").as_uri()]
    assert [e.new_text for e in action.edit.changes[(tmp_path / "pyproject.toml").as_uri()]] == ['compiled = ["sub/losses.py:focal"]\n']
    nearest = compiled_entry_action("focal", str(document), diagnostic, PositionCodec(types.PositionEncodingKind.Utf16), None)
    assert nearest is not None and nearest.edit is not None and list(nearest.edit.changes or {}) == [(tmp_path / "sub" / "pyproject.toml").as_uri()]
