"""Naming a function compiled in a pyproject.toml: the editor's quick fix for a finding in code
nothing known compiles (`if_compiled`, analysis/uncompiled.py).

The finding's note says "name it in `[tool.graphmend] compiled`"; this writes that entry. The file
is changed by one insertion, so its comments and layout stay: into an existing `compiled = [...]`
array of the `[tool.graphmend]` table, as a new key under the table's header, or as a new table at
the end. The result is parsed again and read as GraphMend's configuration before it is offered;
where any of that fails (TOML that does not parse, a table written with dotted keys or inline, a
`compiled` that is not an array), nothing is offered rather than a guess.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .config import ConfigError, config_from_table

_HEADER = re.compile(r"^\s*\[\s*tool\s*\.\s*graphmend\s*\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")
_COMPILED_KEY = re.compile(r"^\s*compiled\s*=\s*\[")


@dataclass(frozen=True)
class Insertion:
    """Insert `text` before character `column` of line `line` (0-based) of the file."""

    line: int
    column: int
    text: str


def nearest_pyproject(document: Path) -> Path | None:
    """The pyproject.toml in the document's folder or the closest folder above it."""
    for folder in document.resolve().parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def entry_for(document: Path, pyproject: Path, qualname: str) -> str | None:
    """`path:Name` for `compiled`, the path relative to the pyproject.toml's folder (None when the
    document is not under it)."""
    try:
        relative = document.resolve().relative_to(pyproject.resolve().parent)
    except ValueError:
        return None
    return f"{PurePosixPath(*relative.parts)}:{qualname}"


def compiled_entry_insertion(text: str, entry: str) -> Insertion | None:
    """Where and what to insert into `text` (a pyproject.toml) so that `[tool.graphmend] compiled`
    lists `entry`; None when it already does or the file's shape is not one edited safely."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    table = data.get("tool", {}).get("graphmend") if isinstance(data.get("tool"), dict) else None
    if isinstance(table, dict) and entry in (table.get("compiled") or []):
        return None
    quoted = json.dumps(entry)  # a TOML basic string
    lines = text.splitlines(keepends=True)
    header = next((n for n, line in enumerate(lines) if _HEADER.match(line)), None)
    if header is None:
        if table is not None:
            return None  # `tool.graphmend.compiled = ...` or an inline table: not guessed at
        separator = "" if not text or text.endswith("\n") else "\n"
        blank = "\n" if text.strip() else ""
        insertion = Insertion(len(lines), 0, f"{blank}[tool.graphmend]\ncompiled = [{quoted}]\n")
        if separator:  # the last line has no newline: insert at its end
            insertion = Insertion(len(lines) - 1, len(lines[-1]), f"{separator}{blank}[tool.graphmend]\ncompiled = [{quoted}]\n")
    else:
        end = next((n for n in range(header + 1, len(lines)) if _ANY_HEADER.match(lines[n])), len(lines))
        key = next((n for n in range(header + 1, end) if _COMPILED_KEY.match(lines[n])), None)
        if key is not None:
            column = lines[key].index("[") + 1
            rest = lines[key][column:].strip()
            if not rest or rest.startswith("#"):  # one entry per line: a line of its own, after any comment
                column = len(lines[key].rstrip("\r\n"))
                text_in = f"\n    {quoted},"
            else:
                text_in = quoted if rest.startswith("]") else f"{quoted}, "
            insertion = Insertion(key, column, text_in)
        elif isinstance(table, dict) and "compiled" in table:
            return None  # written in a shape the key pattern does not match
        else:
            insertion = Insertion(header + 1, 0, f"compiled = [{quoted}]\n")
    return insertion if _lists(apply_insertion(text, insertion), entry) else None


def apply_insertion(text: str, insertion: Insertion) -> str:
    lines = text.splitlines(keepends=True)
    if insertion.line >= len(lines):
        return text + insertion.text
    line = lines[insertion.line]
    lines[insertion.line] = line[: insertion.column] + insertion.text + line[insertion.column :]
    return "".join(lines)


def _lists(text: str, entry: str) -> bool:
    """Whether `text` parses, GraphMend reads its table, and `compiled` lists `entry`."""
    try:
        table = tomllib.loads(text)["tool"]["graphmend"]
        return entry in config_from_table(table, "pyproject.toml").compiled
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ConfigError):
        return False
