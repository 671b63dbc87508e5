"""Fixing files on disk: read as Python would, fix, and write back atomically.

A file is only replaced when the fixed text parses; it is written to a temporary file in the same
directory and moved over the original (`os.replace` is atomic on POSIX), in its original encoding
(a UTF-8 byte-order mark is kept) and line endings, with its permissions.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..files import read_source
from ..notebooks import Notebook, NotebookError, read_notebook
from .engine import FileFix, fix_source
from .model import Safety


@dataclass
class FileOutcome:
    path: Path
    fix: FileFix | None = None
    skip_reason: str | None = None
    written: bool = False
    errors: list[str] = field(default_factory=list)
    notebook: Notebook | None = None  # the fix's positions are in the notebook's joined cells

    def location(self, line: int, column: int) -> str:
        """`line:col`, or `cell N:line:col` in a notebook (1-based column)."""
        if self.notebook is not None:
            found = self.notebook.locate(line)
            if found is not None:
                return f"cell {found[0]}:{found[1]}:{column + 1}"
        return f"{line}:{column + 1}"


def fix_file(path: Path, config: Config, *, level: Safety = Safety.SAFE, codes: frozenset[str] | None = None, write: bool = True) -> FileOutcome:
    source = read_source(path, config.max_file_bytes)
    if source.text is None:
        return FileOutcome(path, skip_reason=source.skip_reason)
    notebook = None
    text = source.text
    if path.suffix == ".ipynb":
        try:
            notebook = read_notebook(source.text)
        except NotebookError as exc:
            return FileOutcome(path, skip_reason=str(exc))
        text = notebook.text
    result = fix_source(text, str(path), config, level=level, codes=codes)
    outcome = FileOutcome(path, result, notebook=notebook)
    if write and result.changed:
        try:
            new_text = notebook.written(result.fixed) if notebook is not None else result.fixed
            write_atomically(path, new_text, source.encoding, expected=source.text)
            outcome.written = True
        except NotebookError as exc:
            outcome.errors.append(f"cannot write {path} back: {exc}; left unchanged")
        except OSError as exc:
            outcome.errors.append(f"cannot write {path}: {exc.strerror or exc}")
    return outcome


class ChangedOnDisk(OSError):
    """The file changed between reading and writing (an editor saved it): its edit wins."""


def write_atomically(path: Path, text: str, encoding: str = "utf-8", expected: str | None = None) -> None:
    """Replace `path` with `text` in one step; with `expected`, only if the file still holds it."""
    data = text.encode(encoding)
    if encoding == "utf-8-sig" and not data.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    directory = path.parent
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".graphmend", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        if expected is not None and path.read_bytes().decode(encoding, errors="replace").lstrip("\ufeff") != expected.lstrip("\ufeff"):
            raise ChangedOnDisk(f"{path} changed while it was being fixed; left as it is now")
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
