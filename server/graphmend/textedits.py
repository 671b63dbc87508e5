"""Text edits on source text, apart from any parser: the line-based edits the editor and the CLI
apply, and the checks they need (does the text still compile, which line break does it use).

Fixers build their edits with libcst (rewrite/context.py); the language server and the workspace
command only ever need these plain-text operations, so they import this module and not libcst's.
"""

from __future__ import annotations

import ast
import difflib
import re

from .analysis.source import SourceFile
from .findings import Edit, Span


def changed_lines_edit(first_line: int, old: list[str], new: list[str]) -> Edit:
    """The edit that turns `old` (lines from `first_line` on) into `new`, replacing only the
    lines that differ."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = first_line + prefix
    removed = old[prefix : len(old) - suffix]
    added = new[prefix : len(new) - suffix]
    text = "".join(line + "\n" for line in added)
    return Edit(Span(start, 0, start + len(removed), 0), text)


def text_edits(before: str, after: str) -> list[Edit]:
    """Whole-line edits that turn `before` into `after`, touching only the lines that differ
    (fix-all in an editor: the cursor and folds elsewhere stay put)."""
    old, new = _lines_with_breaks(before), _lines_with_breaks(after)
    last_lines = SourceFile(before).lines
    document_end = (len(last_lines), len(last_lines[-1]))

    def start_of(index: int) -> tuple[int, int]:
        return (index + 1, 0) if index < len(old) else document_end

    edits: list[Edit] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            (start_line, start_col), (end_line, end_col) = start_of(i1), start_of(i2)
            edits.append(Edit(Span(start_line, start_col, end_line, end_col), "".join(new[j1:j2])))
    return edits


def _lines_with_breaks(text: str) -> list[str]:
    parts = _BREAK.split(text)
    lines = ["".join(parts[i : i + 2]) for i in range(0, len(parts), 2)]
    return lines if lines and lines[-1] else lines[:-1]


_BREAK = re.compile(r"(\r\n|\r|\n)")


def parses(text: str) -> bool:
    """Whether `text` is valid Python (rewrites never write code that is not): compiled, not only
    parsed, so that what only the compiler rejects (a parameter named twice) is caught too.
    Top-level `await` is allowed: notebooks' cells may use it."""
    try:
        compile(text, "<rewrite>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def line_ending(text: str) -> str:
    """The file's line break (that of its first line; "\n" for a one-line file)."""
    for index, char in enumerate(text):
        if char == "\n":
            return "\n"
        if char == "\r":
            return "\r\n" if text.startswith("\r\n", index) else "\r"
    return "\n"


def in_line_ending(new_text: str, ending: str) -> str:
    """Fixers write "\n"; a CRLF file must not end up with mixed line breaks."""
    return new_text if ending == "\n" else new_text.replace("\r\n", "\n").replace("\n", ending)


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply non-overlapping edits (line/char positions in `text`) from the bottom up, in the
    text's own line endings."""
    ending = line_ending(text)
    lines = SourceFile(text).lines
    starts = [0]
    offset = 0
    for line in lines[:-1]:
        offset += len(line)
        # the original line break (\r\n, \r or \n) follows this line
        if text.startswith("\r\n", offset):
            offset += 2
        else:
            offset += 1
        starts.append(offset)

    def position(line: int, column: int) -> int:
        if line - 1 >= len(starts):
            return len(text)
        return starts[line - 1] + column

    result = text
    for edit in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        begin = position(edit.span.start_line, edit.span.start_col)
        end = position(edit.span.end_line, edit.span.end_col)
        result = result[:begin] + in_line_ending(edit.new_text, ending) + result[end:]
    return result
