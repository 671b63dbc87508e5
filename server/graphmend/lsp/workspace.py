"""The workspace commands' work: fix or check every Python file of the workspace folders.

Files open in the editor are taken as the editor has them (their unsaved text and version);
the others are read from disk and processed in worker processes, so a large tree uses every core
and the server's event loop stays free. Cancellation is checked between files.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..analysis import analyze
from ..analysis.source import SourceFile
from ..batch import each_result
from ..config import Config
from ..files import discover_workspace, read_source
from ..rewrite import fix_source
from ..rewrite.engine import break_count
from ..textedits import line_ending, text_edits
from .convert import to_diagnostic, to_text_edits


@dataclass
class OpenText:
    uri: str
    version: int | None
    text: str


@dataclass
class FileFixResult:
    path: Path
    original: str | None = None  # None: skipped
    fixed: str | None = None
    removed: int = 0  # graph-break sites the fixes removed (as the CLI summary counts them)
    declined: Counter = field(default_factory=Counter)
    left: int = 0  # break sites left
    skip_reason: str | None = None


@dataclass
class MendSummary:
    files: int = 0  # files looked at
    changed: int = 0
    fixed: int = 0
    left: int = 0
    declined: Counter = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)
    cancelled: bool = False
    refused: str | None = None  # why the editor did not apply the edit, when it did not

    def add(self, result: FileFixResult) -> None:
        """Count a file's outcome (what was fixed is counted once its edit is sent)."""
        if result.skip_reason is not None:
            self.skipped.append(f"{result.path}: {result.skip_reason}")
            return
        self.files += 1
        self.left += result.left
        self.declined.update(result.declined)

    def message(self) -> str:
        """What happened, in one line. Skipped files are counted here and named, with their
        reasons, in the log: a file can be skipped for being unreadable, too large, or edited while
        the workspace was being mended."""
        plural = "s" if self.fixed != 1 else ""
        if self.refused is not None:
            text = (
                f"GraphMend: the editor did not apply the mend ({self.refused}); no file was changed "
                f"({self.fixed} graph break{plural} in {self.changed} file{'s' if self.changed != 1 else ''} were ready)"
            )
        else:
            text = (
                f"GraphMend: fixed {self.fixed} graph break{plural} in {self.changed} "
                f"file{'s' if self.changed != 1 else ''} ({self.files} checked); {self.left} left"
            )
        reasons = ", ".join(f"{key} {count}" for key, count in self.declined.most_common(6))
        if reasons:
            text += f" (declined: {reasons})"
        if self.skipped:
            text += f"; skipped {len(self.skipped)} file{'s' if len(self.skipped) != 1 else ''} (the log says why)"
        return text + (" - cancelled before the end." if self.cancelled else ".")


def workspace_files(folders: Iterable[Path], exclude: tuple[str, ...], config_for: Callable[[Path], Config]) -> list[Path]:
    """Every Python file of the folders, minus .gitignored ones, the `exclude` setting and each
    file's `[tool.graphmend] exclude`."""
    files: list[Path] = []
    seen: set[Path] = set()
    for folder in folders:
        for path in discover_workspace(folder, exclude):
            if path in seen:
                continue
            seen.add(path)
            config = config_for(path)
            if config.exclude and config.root is not None and _excluded_by_config(path, config):
                continue
            files.append(path)
    return files


def _excluded_by_config(path: Path, config: Config) -> bool:
    from ..files import path_matches

    return path_matches(path, config.exclude, config.root)


def fix_one(job: tuple[Path, str | None, Config]) -> FileFixResult:
    path, text, config = job
    if text is None:
        source = read_source(path, config.max_file_bytes)
        if source.text is None:
            return FileFixResult(path, skip_reason=source.skip_reason)
        text = source.text
    result = fix_source(text, str(path), config)
    return FileFixResult(
        path, text, result.fixed, result.gone(), Counter(d.key for d in result.declined), break_count(result.remaining)
    )


def check_one(job: tuple[Path, Config, str | None, str]) -> tuple[Path, list[types.Diagnostic] | None, str | None]:
    path, config, encoding, docs_url = job
    source = read_source(path, config.max_file_bytes)
    if source.text is None:
        return path, None, source.skip_reason
    findings = analyze(source.text, str(path), config)
    lines = SourceFile(source.text).lines
    codec = PositionCodec(encoding=encoding)
    uri = path.as_uri()
    return path, [to_diagnostic(f, uri, codec, lines, docs_url) for f in findings], None


def run_jobs(function: Callable, jobs: list, workers: int, cancelled: Callable[[], bool], progress: Callable[[int, int], None]) -> tuple[list, bool]:
    """Run `function` over `jobs` (batch.py: worker processes, spawned, for more than a handful),
    reporting progress and stopping early when `cancelled()` turns true. Returns (results in the
    jobs' order, was_cancelled)."""
    results: list = []
    for result in each_result(function, jobs, workers, cancelled=cancelled, spawn=True):
        results.append(result)
        progress(len(results), len(jobs))
    return results, len(results) < len(jobs)


def worker_count(setting: int) -> int:
    return setting or os.cpu_count() or 1


def fix_jobs(files: list[Path], open_texts: dict[Path, OpenText], config_for: Callable[[Path], Config]) -> list[tuple[Path, str | None, Config]]:
    return [(path, open_texts[path].text if path in open_texts else None, config_for(path)) for path in files]


def check_jobs(files: list[Path], config_for: Callable[[Path], Config], encoding: str, docs_url: str) -> list[tuple[Path, Config, str, str]]:
    return [(path, config_for(path), encoding, docs_url) for path in files]



def document_edit(result: FileFixResult, uri: str, version: int | None, codec: PositionCodec) -> types.TextDocumentEdit:
    """The minimal edits that turn a file's original text into its fixed text."""
    assert result.original is not None and result.fixed is not None
    lines = SourceFile(result.original).lines
    edits = to_text_edits(text_edits(result.original, result.fixed), codec, lines, line_ending(result.original))
    document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.TextDocumentEdit(text_document=document, edits=list(edits))
