"""Finding the Python files to check and reading them safely.

Reading never raises: a file GraphMend cannot use (binary, undecodable, too large, unreadable)
comes back with the reason it was skipped, which the CLI prints and the server shows.
Files are decoded the way Python itself decodes them (a PEP 263 coding cookie, UTF-8 by
default, a UTF-8 BOM allowed), so anything Python would import can be checked.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import os
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .gitignore import IgnoreRules

# Directories never descended into when they are found by recursion (an explicitly named path is
# always checked).
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__", "node_modules",
        "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".pytype", "_build", "buck-out",
        "build", "dist", ".direnv", "__pypackages__", ".ipynb_checkpoints", ".hypothesis",
    }
)


@dataclass(frozen=True)
class SourceText:
    path: Path
    text: str | None
    encoding: str = "utf-8"
    skip_reason: str | None = None


def read_source(path: Path, max_bytes: int) -> SourceText:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return SourceText(path, None, skip_reason=f"larger than {max_bytes:,} bytes (max-file-bytes)")
        data = path.read_bytes()
    except OSError as exc:
        return SourceText(path, None, skip_reason=f"cannot be read ({exc.strerror or exc})")
    return decode_source(path, data)


def decode_source(path: Path, data: bytes) -> SourceText:
    if b"\0" in data:
        return SourceText(path, None, skip_reason="binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # detect_encoding also raises when the first lines are not UTF-8 and declare nothing.
        if "invalid or missing encoding declaration" in str(exc):
            return SourceText(path, None, skip_reason="not valid UTF-8 text")
        return SourceText(path, None, skip_reason=f"invalid source encoding declaration ({exc})")
    except LookupError as exc:
        return SourceText(path, None, skip_reason=f"unknown source encoding ({exc})")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        declared = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        return SourceText(path, None, skip_reason=f"not valid {declared} text")
    text = text.removeprefix("\ufeff")
    return SourceText(path, text, encoding=encoding)


def path_matches(path: Path, patterns: Iterable[str], root: Path | None) -> bool:
    """Whether a glob of `patterns` names `path` (or a folder above it), by its path as given, its
    name, or its path relative to `root` (the directory of the configuration the globs come from)."""
    if not patterns:
        return False
    candidates = [path.as_posix(), path.name]
    if root is not None:
        with contextlib.suppress(ValueError):
            candidates.append(path.resolve().relative_to(root.resolve()).as_posix())
    for pattern in patterns:
        stripped = pattern.rstrip("/")
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(candidate, stripped) or (
                stripped and (candidate == stripped or candidate.startswith(stripped + "/"))
            ):
                return True
    return False


def discover(
    paths: Iterable[Path], exclude: Iterable[str] = (), root: Path | None = None, force_exclude: bool = False
) -> Iterator[Path]:
    """Python files under `paths`, in a stable order. Missing paths raise FileNotFoundError.

    A file named explicitly is checked even when `exclude` matches it (asking for it is asking),
    unless `force_exclude`: a pre-commit hook or an editor passes every changed file by name, and
    the project's excludes must hold for those too."""
    patterns = tuple(exclude)
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(str(path))
        if path.is_file():
            if force_exclude and any(path_matches(p, patterns, root) for p in (path, *path.parents)):
                continue
            if path not in seen:
                seen.add(path)
                yield path
            continue
        for directory, dirnames, filenames in os.walk(path):
            base = Path(directory)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in DEFAULT_EXCLUDED_DIRS
                and not d.startswith(".")
                and not d.endswith(".egg-info")
                and not path_matches(base / d, patterns, root)
            )
            for name in sorted(filenames):
                if name.endswith((".py", ".ipynb")):  # stubs (.pyi) never run, so they cannot break a graph
                    candidate = base / name
                    if candidate not in seen and not path_matches(candidate, patterns, root):
                        seen.add(candidate)
                        yield candidate


def discover_workspace(folder: Path, exclude: Iterable[str] = ()) -> list[Path]:
    """Python files of a workspace folder, minus what git ignores when the folder is in a git work
    tree (nested .gitignore files, info/exclude and the global ignore file, read as data: running git
    would run programs the repository's own config names), then the `exclude` globs relative to the
    folder."""
    patterns = tuple(exclude)
    rules = IgnoreRules.for_folder(folder)
    if rules is None:
        return list(discover([folder], patterns, folder))
    real = folder.resolve()  # the ignore rules' folders are resolved; symlinks inside are not followed
    files = []
    for directory, dirnames, filenames in os.walk(folder):
        base = Path(directory)
        real_base = real / base.relative_to(folder)
        rules.enter(real_base)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in DEFAULT_EXCLUDED_DIRS
            and not (base / d).is_symlink()
            and not rules.ignored(real_base / d, is_dir=True)
            and not path_matches(base / d, patterns, folder)
        )
        for name in filenames:
            candidate = base / name
            if (
                name.endswith(".py")
                and not rules.ignored(real_base / name, is_dir=False)
                and candidate.is_file()
                and not path_matches(candidate, patterns, folder)
            ):
                files.append(candidate)
    return sorted(files)
