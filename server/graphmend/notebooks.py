"""Jupyter notebooks as Python source: the code cells joined into one module, and back.

A notebook's code cells run in order in one namespace, so the analysis sees them as one module
(a `@torch.compile` function defined in cell 2 and called in cell 5 is one program). Each cell
starts with a marker comment line, which keeps the cells apart through a fix: fixers preserve
comments, so the fixed module splits back into the same cells, a helper added after
`import torch` landing in the cell that imports torch.

IPython syntax is not Python: line magics (`%time x`), shell escapes (`!pip ...`, `x = !ls`), help
(`obj?`) and cell magics (`%%bash`) are masked, each line replaced by a `pass` of the same
indentation tagged with its number, so line numbers stay true; the masked lines are put back when
the notebook is written. The JSON is written back in the layout it was read in (nbformat's: one
space of indentation, keys sorted, non-ASCII kept), touching nothing but the changed cells'
`source`; a notebook whose layout cannot be reproduced is refused rather than reformatted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .findings import Span

CELL_MARKER = "# graphmend: notebook cell {}"
_MARKER = re.compile(r"^# graphmend: notebook cell (\d+)$")
_MASK = "pass  # graphmend: masked IPython line {}"
_MASKED = re.compile(r"^(\s*)pass  # graphmend: masked IPython line (\d+)$")
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|\w[\w.]*\s*=\s*[%!])|\?\s*$")
# json.dumps styles that reproduce a notebook's bytes: nbformat's first
_LAYOUTS: tuple[dict[str, Any], ...] = (
    {"indent": 1, "sort_keys": True, "ensure_ascii": False},
    {"indent": 1, "ensure_ascii": False},
    {"indent": 2, "sort_keys": True, "ensure_ascii": False},
    {"indent": 2, "ensure_ascii": False},
    {"indent": 4, "ensure_ascii": False},
)


class NotebookError(ValueError):
    """The file is not a notebook GraphMend can read or write back unchanged."""


@dataclass(frozen=True)
class CellSpan:
    number: int  # 1-based position among all the notebook's cells (as the cell list shows them)
    first_line: int  # 1-based line of the cell's first source line in the joined module
    line_count: int

    def holds(self, span: Span) -> bool:
        """Whether `span` (joined-module lines) lies in this cell; an end at column 0 of the line
        after the cell (a whole-line edit of its last line) counts as inside."""
        last = self.first_line + self.line_count - 1
        ends_inside = span.end_line <= last or (span.end_line == last + 1 and span.end_col == 0)
        return self.first_line <= span.start_line <= last and ends_inside

    def local(self, span: Span) -> Span:
        """`span` in the cell's own lines (1-based from its first line)."""
        shift = self.first_line - 1
        return Span(span.start_line - shift, span.start_col, span.end_line - shift, span.end_col)

    def local_line(self, line: int) -> int:
        """A finding's `break_line` in the cell's own lines (0, "none", stays 0)."""
        return line - (self.first_line - 1) if line else 0


@dataclass
class Notebook:
    data: dict[str, Any]
    text: str  # the code cells as one module, with markers
    cells: list[CellSpan]
    layout: dict[str, Any] | None  # how to dump the JSON back unchanged; None: not reproducible
    masked: dict[int, str] = field(default_factory=dict)  # mask number -> original line

    def cell_of(self, span: Span) -> CellSpan | None:
        """The cell `span` (joined-module lines) lies in; None on a marker or across cells."""
        return next((cell for cell in self.cells if cell.holds(span)), None)

    def locate(self, line: int) -> tuple[int, int] | None:
        """(cell number, line in the cell) of a line of the joined module; None on a marker."""
        cell = self.cell_of(Span(line, 0, line, 0))
        return (cell.number, cell.local(Span(line, 0, line, 0)).start_line) if cell is not None else None

    def written(self, fixed: str) -> str:
        """The notebook's JSON with the code cells of `fixed` (the joined module after fixes)."""
        if self.layout is None:
            raise NotebookError("its JSON layout is not one GraphMend can write back without reformatting the file")
        sources: dict[int, list[str]] = {}
        current: int | None = None
        before_first: list[str] = []  # an `import torch` a fix added at the top goes into the first cell
        for line in fixed.splitlines(keepends=True):
            marker = _MARKER.match(line.rstrip("\r\n"))
            if marker:
                current = int(marker.group(1))
                sources[current] = before_first if not sources else []
                continue
            if current is None:
                before_first.append(line)
                continue
            masked = _MASKED.match(line.rstrip("\r\n"))
            sources[current].append(self.masked[int(masked.group(2))] + "\n" if masked else line)
        if set(sources) != {c.number for c in self.cells}:
            raise NotebookError("a cell marker was lost while fixing")
        data = json.loads(json.dumps(self.data))
        for number, lines in sources.items():
            cell = data["cells"][number - 1]
            original = _source_text(cell)
            text = "".join(lines)
            if not original.endswith("\n"):
                text = text[:-1] if text.endswith("\n") else text
            if text != original:
                cell["source"] = text.splitlines(keepends=True) if isinstance(cell["source"], list) else text
        return json.dumps(data, **self.layout) + "\n"


def read_notebook(raw: str) -> Notebook:
    """The notebook in `raw` (its JSON text) as a module; NotebookError when it is not one."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (no `cells` list)")
    language = (data.get("metadata", {}).get("kernelspec", {}) or {}).get("language") or (
        data.get("metadata", {}).get("language_info", {}) or {}
    ).get("name", "python")
    if str(language).lower() != "python":
        raise NotebookError(f"a {language} notebook, not Python")
    code = [(n, _source_text(c)) for n, c in enumerate(data["cells"], start=1) if isinstance(c, dict) and c.get("cell_type") == "code"]
    text, cells, masked = join_cells(code)
    return Notebook(data, text, cells, _layout_of(raw, data), masked)


def join_cells(code_cells: list[tuple[int, str]]) -> tuple[str, list[CellSpan], dict[int, str]]:
    """(number, source) of each code cell, in order -> the module text, where each cell's lines
    are, and the masked IPython lines by mask number."""
    lines: list[str] = []
    cells: list[CellSpan] = []
    masked: dict[int, str] = {}
    for number, cell_source in code_cells:
        lines.append(CELL_MARKER.format(number))
        source = cell_source.splitlines()
        whole_cell_magic = bool(source) and source[0].lstrip().startswith("%%")
        first = len(lines) + 1
        for line in source:
            if whole_cell_magic or _IPYTHON_LINE.search(line):
                masked[len(masked)] = line
                indent = line[: len(line) - len(line.lstrip())] if not whole_cell_magic else ""
                lines.append(indent + _MASK.format(len(masked) - 1))
            else:
                lines.append(line)
        cells.append(CellSpan(number, first, len(source)))
    return ("\n".join(lines) + "\n" if lines else ""), cells, masked


def _source_text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _layout_of(raw: str, data: dict[str, Any]) -> dict[str, Any] | None:
    for layout in _LAYOUTS:
        dumped = json.dumps(data, **layout)
        if raw in (dumped, dumped + "\n"):
            return layout
    return None
