"""Source text as the analyser needs it: parsed once, with cheap conversion from `ast` positions.

`ast` columns are UTF-8 byte offsets. Findings carry character columns, so each reported node is
converted here; ASCII lines (nearly all code) need no work at all. Lines are split exactly as the
Python tokenizer splits them (\\r\\n, \\r or \\n), not with `str.splitlines`, which also breaks
on form feeds and other characters the tokenizer treats as ordinary text.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property

from ..findings import Span

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceFile:
    """A parsed module plus the line table used to turn nodes into spans and snippets."""

    def __init__(self, text: str, path: str = "<string>") -> None:
        self.text = text
        self.path = path

    @cached_property
    def lines(self) -> list[str]:
        if "\r" not in self.text:
            return self.text.split("\n")  # the common case, at C speed
        return _LINE_BREAK.split(self.text)

    def parse(self) -> ast.Module:
        """Parse the text; raises SyntaxError, ValueError (NUL bytes) or RecursionError."""
        return ast.parse(self.text, filename=self.path, type_comments=False)

    def char_col(self, line: int, byte_col: int) -> int:
        """Convert an `ast` UTF-8 byte column on 1-based `line` to a character column."""
        if line < 1 or line > len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> Span:
        start_line = node.lineno  # type: ignore[attr-defined]
        end_line = getattr(node, "end_lineno", None) or start_line
        start = self.char_col(start_line, node.col_offset)  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        end = self.char_col(end_line, end_col) if end_col is not None else start
        return Span(start_line, start, end_line, end)

    def text_of(self, node: ast.AST) -> str:
        """The source lines a node spans (whole lines, cheap: no column arithmetic)."""
        end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        return "\n".join(self.lines[node.lineno - 1 : end])  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        """The exact source text of `node` (a lambda's body without the rest of its line)."""
        span = self.span(node)
        if span.start_line == span.end_line:
            return self.lines[span.start_line - 1][span.start_col : span.end_col]
        middle = self.lines[span.start_line : span.end_line - 1]
        return "\n".join([self.lines[span.start_line - 1][span.start_col :], *middle, self.lines[span.end_line - 1][: span.end_col]])

    def header_span(self, node: ast.AST) -> Span:
        """The first line of a compound statement (`for ...:`), for related locations."""
        span = self.span(node)
        line_text = self.lines[span.start_line - 1] if span.start_line <= len(self.lines) else ""
        return Span(span.start_line, span.start_col, span.start_line, len(line_text.rstrip()))

    def snippet(self, node: ast.AST, limit: int = 60) -> str:
        """The source text of `node`, on one line and shortened to `limit` characters."""
        span = self.span(node)
        if span.start_line == span.end_line:
            text = self.lines[span.start_line - 1][span.start_col : span.end_col]
        else:
            first = self.lines[span.start_line - 1][span.start_col :]
            text = first.rstrip() + " ..."
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."
