"""`graphmend check --format sarif`: SARIF 2.1.0, the format code-scanning services read.

One run, with a rule entry (name, message, why dynamo breaks, what to do) for every rule that has
a result, and one result per finding. A finding with a safe fix carries it as a SARIF `fix`: the
replacements `graphmend fix` would make, each alone (two fixes in one file may both add the same
module-level helper; `graphmend fix` applies them together without that). Columns count Unicode
code points, as `Finding` spans do, and the run says so (`columnKind`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from . import __version__
from .analysis.rules import RULES_BY_CODE
from .findings import Finding, Severity, Span
from .rewrite.model import Fix

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _region(span: Span) -> dict[str, int]:
    return {"startLine": span.start_line, "startColumn": span.start_col + 1, "endLine": span.end_line, "endColumn": span.end_col + 1}


def _location(path: str, span: Span) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": path}, "region": _region(span)}}


def _rule(code: str) -> dict[str, Any]:
    rule = RULES_BY_CODE.get(code)
    if rule is None:  # GM000 (does not parse), GM001 (analysis incomplete)
        return {"id": code, "name": "parse-error" if code == "GM000" else "internal-error"}
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": re.sub(r"\{\w+\}", "...", rule.message)},
        "fullDescription": {"text": _sentence(rule.why)},
        "help": {"text": f"{_sentence(rule.why)} {rule.fix}"},
    }


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _fix(path: str, fix: Fix) -> dict[str, Any]:
    return {
        "description": {"text": fix.title},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": path},
                "replacements": [
                    {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.new_text}} for edit in fix.edits
                ],
            }
        ],
    }


def _result(path: str, finding: Finding, fix: Fix | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [_location(path, finding.span)],
    }
    if finding.related:
        result["relatedLocations"] = [
            {**_location(path, related.span), "id": number, "message": {"text": related.message}}
            for number, related in enumerate(finding.related)
        ]
    if fix is not None:
        result["fixes"] = [_fix(path, fix)]
    return result


def sarif_log(
    results: Iterable[tuple[str, list[Finding]]],
    fixes: Sequence[Mapping[int, Fix]] | None = None,
    cells: Sequence[Sequence[int] | None] | None = None,
) -> dict[str, Any]:
    """The SARIF log of `results` (path, findings); `fixes[n]` maps finding indices of file n to
    fixes; `cells[n]`, for a notebook, gives each finding's cell (its lines count in the cell, and
    the result says so in its properties: SARIF has no notion of cells)."""
    entries = []
    codes: dict[str, None] = {}
    for number, (path, findings) in enumerate(results):
        file_fixes = fixes[number] if fixes is not None else {}
        file_cells = cells[number] if cells is not None else None
        for index, finding in enumerate(findings):
            codes.setdefault(finding.code)
            entry = _result(path.replace("\\", "/"), finding, file_fixes.get(index))
            if file_cells is not None:
                entry["properties"] = {"notebookCell": file_cells[index]}
            entries.append(entry)
    driver = {"name": "graphmend", "version": __version__, "rules": [_rule(code) for code in sorted(codes)]}
    return {"version": "2.1.0", "$schema": SCHEMA, "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": entries}]}


def write_sarif(
    out: TextIO,
    results: Iterable[tuple[str, list[Finding]]],
    fixes: Sequence[Mapping[int, Fix]] | None = None,
    cells: Sequence[Sequence[int] | None] | None = None,
) -> None:
    json.dump(sarif_log(results, fixes, cells), out, indent=2)
    out.write("\n")
