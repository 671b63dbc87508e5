"""How `graphmend check` prints findings: text for people, JSON for tools, GitHub annotations for CI.

Lines and columns are printed 1-based (editors and GitHub count from 1); `Finding` stores 0-based
character columns.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

from .analysis.rules import RULES_BY_CODE
from .findings import Finding, Severity

_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def finding_record(path: str, finding: Finding, fixable: bool = False) -> dict[str, object]:
    span = finding.span
    return {
        "path": path,
        "line": span.start_line,
        "column": span.start_col + 1,
        "end_line": span.end_line,
        "end_column": span.end_col + 1,
        "break_line": finding.break_line or span.start_line,  # the line dynamo's log names
        "code": finding.code,
        "message": finding.message,
        "severity": finding.severity.value,
        "fixable": fixable,
        "effect": finding.effect,
        "function": finding.function,
        "fix_hint": finding.fix_hint,
        "latent": finding.latent,
        "if_compiled": finding.if_compiled,
    }


Cells = Sequence[Sequence[int] | None]  # per file: a notebook's cell of each finding, or None


@dataclass(frozen=True)
class ShownFinding:
    """A finding as every format prints it: its file, its notebook cell (None in a .py file), and
    whether `graphmend fix` rewrites it."""

    path: str
    finding: Finding
    cell: int | None = None
    fixable: bool = False

    @property
    def where(self) -> str:
        """`path`, or `path:cell N` for a finding in a notebook cell (as ruff prints them)."""
        return self.path if self.cell is None else f"{self.path}:cell {self.cell}"


def shown_findings(
    results: Iterable[tuple[str, list[Finding]]],
    fixable: Sequence[Collection[int]] | None = None,
    cells: Cells | None = None,
) -> list[ShownFinding]:
    """Per-file results (with, per file, the indices of fixable findings and each finding's cell)
    flattened in order."""
    shown = []
    for number, (path, findings) in enumerate(results):
        marked = fixable[number] if fixable is not None else ()
        file_cells = cells[number] if cells is not None else None
        for index, finding in enumerate(findings):
            cell = file_cells[index] if file_cells is not None else None
            shown.append(ShownFinding(path, finding, cell, index in marked))
    return shown


def write_text(out: TextIO, shown: Iterable[ShownFinding]) -> None:
    """One line per finding; `[*]` after the code marks a finding `graphmend fix` rewrites (as ruff),
    `(latent)` one dynamo does not reach until an earlier break is fixed, `(if compiled)` one in code
    nothing known compiles."""
    for item in shown:
        finding = item.finding
        mark = (" [*]" if item.fixable else "") + (" (latent)" if finding.latent else "") + (" (if compiled)" if finding.if_compiled else "")
        out.write(f"{item.where}:{finding.span.start_line}:{finding.span.start_col + 1}: {finding.code}{mark} {finding.message}\n")


def write_json(out: TextIO, shown: Iterable[ShownFinding]) -> None:
    records = []
    for item in shown:
        record = finding_record(item.path, item.finding, item.fixable)
        if item.cell is not None:
            record["cell"] = item.cell  # lines count from the cell's first line
        records.append(record)
    json.dump(records, out, indent=2)
    out.write("\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(out: TextIO, shown: Iterable[ShownFinding]) -> None:
    """GitHub Actions workflow commands: one annotation per finding on the changed file (for a
    notebook, on the file, the cell named in the title: GitHub has no cell positions)."""
    for item in shown:
        finding = item.finding
        span = finding.span
        level = _GITHUB_LEVEL[finding.severity]
        rule = RULES_BY_CODE.get(finding.code)
        title = f"GraphMend {finding.code}" + (f" ({rule.name})" if rule else "")
        if item.cell is not None:
            title += f" in cell {item.cell}, line {span.start_line}"
        properties = ",".join(
            [
                f"file={_escape_property(item.path)}",
                f"line={span.start_line}",
                f"col={span.start_col + 1}",
                f"endLine={span.end_line}",
                f"endColumn={span.end_col + 1}",
                f"title={_escape_property(title)}",
            ]
        )
        out.write(f"::{level} {properties}::{_escape_data(finding.message)}\n")


def write_statistics(out: TextIO, findings: Iterable[Finding]) -> None:
    counts = Counter(f.code for f in findings)
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = RULES_BY_CODE.get(code)
        name = rule.name if rule else ("parse-error" if code == "GM000" else "internal-error")
        out.write(f"{count:6d}  {code}  {name}\n")
