"""Which files of a workspace git ignores, decided by reading the ignore files, never by running git.

Running `git ls-files` in a folder the user merely opened runs programs that folder chooses:
git executes `core.fsmonitor` (and other commands) from the repository's own `.git/config`.
Opening a workspace must never run its code, so the ignore rules are read as data instead:
every `.gitignore` from the repository root down to each file, `.git/info/exclude`, and the
user's global ignore file at git's default location. Patterns are matched with `pathspec`'s
`GitIgnoreSpec` (git's wildmatch rules, negation, directory-only patterns); a deeper file's
patterns override a shallower one's, and an ignored directory is not entered, as in git.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

MAX_IGNORE_FILE_BYTES = 1_000_000  # a larger "ignore file" is not one a person wrote: skip it


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding `.git` (a directory, or a file for worktrees)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _read_spec(path: Path) -> GitIgnoreSpec | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_IGNORE_FILE_BYTES:
            return None
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    spec = GitIgnoreSpec.from_lines(lines)
    return spec if len(spec) else None


def _global_ignore_file() -> Path:
    """git's default `core.excludesFile`: $XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "git" / "ignore"


@dataclass
class IgnoreRules:
    """The ignore specs that apply under one repository: the repository-wide ones (global ignore
    file, info/exclude), then each folder's `.gitignore`, read once when the walk reaches it."""

    root: Path
    repository_wide: list[GitIgnoreSpec] = field(default_factory=list)
    by_folder: dict[Path, GitIgnoreSpec | None] = field(default_factory=dict)

    @classmethod
    def for_folder(cls, folder: Path) -> IgnoreRules | None:
        """Rules for a workspace folder inside a git work tree, or None outside one (nothing is ignored)."""
        folder = folder.resolve()
        root = repository_root(folder)
        if root is None:
            return None
        rules = cls(root)
        for spec_file in (_global_ignore_file(), root / ".git" / "info" / "exclude"):
            spec = _read_spec(spec_file)
            if spec is not None:
                rules.repository_wide.append(spec)  # both are relative to the work tree's root
        directory = root
        rules.enter(directory)
        for part in folder.relative_to(root).parts:
            directory = directory / part
            rules.enter(directory)
        return rules

    def enter(self, directory: Path) -> None:
        """Read `directory/.gitignore` once, the first time the walk reaches it."""
        if directory not in self.by_folder:
            self.by_folder[directory] = _read_spec(directory / ".gitignore")

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git would ignore `path`: the deepest spec with a verdict decides. Only the folders
        above `path` are asked (a few), not every `.gitignore` the walk has read."""
        suffix = "/" if is_dir else ""
        parts = path.relative_to(self.root).parts
        verdict = False
        for shared in self.repository_wide:
            verdict = _verdict(shared, "/".join(parts) + suffix, verdict)
        for depth in range(len(parts)):  # the root, then each folder down to the path's own
            spec = self.by_folder.get(self.root.joinpath(*parts[:depth]))
            if spec is not None:
                verdict = _verdict(spec, "/".join(parts[depth:]) + suffix, verdict)
        return verdict


def _verdict(spec: GitIgnoreSpec, relative: str, verdict: bool) -> bool:
    result = spec.check_file(relative)
    return verdict if result.include is None else result.include
