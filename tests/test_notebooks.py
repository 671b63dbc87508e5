"""Jupyter notebooks: checked as one module of their code cells, findings placed by cell, fixes
written back into the cells with outputs, metadata and layout untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graphmend.notebooks import NotebookError, read_notebook

from .cli_runner import run
from .differential import breaks


def _cell(source: list[str], cell_type: str = "code") -> dict:
    cell: dict = {"cell_type": cell_type, "metadata": {"tags": ["keep"]}, "source": source}
    if cell_type == "code":
        cell |= {"execution_count": 7, "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ünïcode out\n"]}]}
    return cell


NOTEBOOK = {
    "cells": [
        _cell(["# Training step\n", "Tensor-valued branches break the graph."], "markdown"),
        _cell(["%matplotlib inline\n", "import torch"]),
        _cell(
            [
                "@torch.compile\n",
                "def f(x):\n",
                "    y = x * 2\n",
                "    if y.sum() > 0:\n",
                "        y = y + 1\n",
                "    else:\n",
                "        y = y - 1\n",
                "    return y\n",
                "\n",
                "def inputs():\n",
                "    return [(torch.randn(4),), (-torch.ones(4),)]",
            ]
        ),
        _cell(["!nvidia-smi\n", "out = f(torch.randn(3))\n", "out?"]),
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}, "language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _write(path: Path, notebook: dict = NOTEBOOK, **layout: object) -> str:
    text = json.dumps(notebook, **(layout or {"indent": 1, "sort_keys": True, "ensure_ascii": False})) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def test_check_places_findings_by_cell_and_masks_ipython_syntax(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "train.ipynb")
    code, out, err = run(capsys, "check", ".")  # a directory run finds notebooks too
    assert code == 1 and not err
    assert out.startswith("train.ipynb:cell 3:4:8: GM101 [*] `if` branches on the tensor value `y.sum() > 0`")
    assert "GM000" not in out  # `%matplotlib`, `!nvidia-smi` and `out?` are not Python, and not errors
    _, out, _ = run(capsys, "check", "--format", "json", "train.ipynb")
    (record,) = json.loads(out)
    assert (record["path"], record["cell"], record["line"], record["column"], record["code"]) == ("train.ipynb", 3, 4, 8, "GM101")


def test_fix_rewrites_only_the_cells_it_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    original = _write(tmp_path / "train.ipynb")
    code, out, _ = run(capsys, "fix", "train.ipynb")
    assert code == 0 and "train.ipynb:cell 3:4:8: GM101 fixed" in out
    fixed = json.loads((tmp_path / "train.ipynb").read_text(encoding="utf-8"))
    before = json.loads(original)
    changed = [n for n, (a, b) in enumerate(zip(before["cells"], fixed["cells"])) if a != b]
    assert changed == [2]
    assert {k: v for k, v in fixed["cells"][2].items() if k != "source"} == {k: v for k, v in before["cells"][2].items() if k != "source"}
    assert "    y = torch.where(y.sum() > 0, y + 1, y - 1)\n" in fixed["cells"][2]["source"]
    assert not fixed["cells"][2]["source"][-1].endswith("\n")  # the cell's last line, as Jupyter stores it
    expected = json.dumps(fixed, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert (tmp_path / "train.ipynb").read_text(encoding="utf-8") == expected  # nbformat's own layout, kept
    _, out, _ = run(capsys, "check", "train.ipynb")
    assert "No graph breaks found" in out


def test_the_fixed_cells_no_longer_break_under_dynamo(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "train.ipynb")
    for name in ("before.py", "after.py"):
        notebook = json.loads((tmp_path / "train.ipynb").read_text(encoding="utf-8"))
        code_cells = ["".join(c["source"]) for c in notebook["cells"][1:3]]
        (tmp_path / name).write_text("\n".join(code_cells).replace("%matplotlib inline\n", "") + "\n", encoding="utf-8")
        run(capsys, "fix", "train.ipynb")
    assert breaks(tmp_path / "before.py")[1] >= 1
    assert breaks(tmp_path / "after.py") == (1, 0)


def test_a_layout_that_cannot_be_reproduced_is_refused_not_reformatted(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "odd.ipynb"
    original = json.dumps(NOTEBOOK, indent=3)  # nobody writes notebooks like this; rewriting would reformat every line
    path.write_text(original, encoding="utf-8")
    code, _out, err = run(capsys, "fix", "odd.ipynb")
    assert path.read_text(encoding="utf-8") == original
    assert "cannot write" in err and "layout" in err and code != 0


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("{not json", "not valid JSON"),
        ('{"cells": 3}', "no `cells` list"),
        (json.dumps({**NOTEBOOK, "metadata": {"kernelspec": {"language": "R"}}}), "a R notebook"),
    ],
)
def test_files_that_are_not_python_notebooks_are_skipped_with_the_reason(raw: str, reason: str) -> None:
    with pytest.raises(NotebookError, match=reason):
        read_notebook(raw)


def test_masked_lines_keep_line_numbers_and_an_unfixed_notebook_round_trips_byte_for_byte() -> None:
    raw = json.dumps(NOTEBOOK, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    notebook = read_notebook(raw)
    assert notebook.locate(notebook.cells[1].first_line + 3) == (3, 4)  # cell 3, line 4: the `if`
    assert "!nvidia-smi" not in notebook.text and "%matplotlib" not in notebook.text
    assert notebook.written(notebook.text) == raw
