"""The edit that silences one finding with a `# graphmend: ignore[GMxxx]` comment.

The comment goes on the finding's first line (or its last, when a comment cannot end the first:
a backslash continuation, a line inside a string), merging into a `graphmend: ignore[...]` comment
already there. The edit is only offered when the result still parses.
"""

from __future__ import annotations

import re

from ..analysis.source import SourceFile
from ..findings import Edit, Finding, Span
from ..textedits import apply_edits, parses

_EXISTING = re.compile(r"#\s*graphmend:\s*ignore\[(?P<codes>[^\]]*)\]", re.IGNORECASE)


def suppression_edit(text: str, finding: Finding, lines: list[str] | None = None, text_parses: bool | None = None) -> Edit | None:
    """The edit, or None when the finding's lines cannot take a comment (or already have it)."""
    lines = lines if lines is not None else SourceFile(text).lines
    candidates = [finding.span.start_line] + ([finding.span.end_line] if finding.span.end_line != finding.span.start_line else [])
    for line in candidates:
        if not 1 <= line <= len(lines):
            continue
        edit = _edit_for_line(lines[line - 1], line, finding.code)
        if edit is None:
            continue
        if not _risky(lines[line - 1]):
            return edit  # a comment after code that neither continues nor opens a string is always fine
        if text_parses is None:
            text_parses = parses(text)
        if not text_parses or parses(apply_edits(text, [edit])):
            return edit
    return None


def _risky(line_text: str) -> bool:
    """A line where a trailing comment might change the meaning: a backslash continuation, or
    quotes that may open a string running onto the next lines. Those get a full parse check."""
    return line_text.rstrip().endswith("\\") or '"""' in line_text or "'''" in line_text


def _edit_for_line(line_text: str, line: int, code: str) -> Edit | None:
    existing = _EXISTING.search(line_text)
    if existing is not None:
        codes = [c.strip() for c in existing.group("codes").split(",") if c.strip()]
        if code in codes:
            return None
        start, end = existing.span("codes")
        merged = ", ".join([*codes, code])
        return Edit(Span(line, start, line, end), merged)
    stripped = len(line_text.rstrip())
    return Edit(Span(line, stripped, line, len(line_text)), f"  # graphmend: ignore[{code}]")
