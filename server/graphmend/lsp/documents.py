"""What the server knows about each open document: one analysis per (uri, version).

Diagnostics, code actions and fix-all all read the analysis stored for the document's current
version; nothing re-analyses on its own. A version whose text does not parse (half-typed code)
shows the syntax error (GM000) together with the findings of the last version that parsed, so the
list does not flicker empty on every keystroke.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis import AnalysisResult, analyze_detailed
from ..analysis.rules import PARSE_ERROR_CODE
from ..analysis.source import SourceFile
from ..config import Config
from ..findings import Finding
from ..rewrite import Declined, FileFix, Fix, fix_source, plan_fix
from ..rewrite.context import FixContext
from ..rewrite.model import Safety
from ..textedits import line_ending
from .settings import Settings


@dataclass
class Analysis:
    """One version of one document, analysed."""

    uri: str
    version: int | None
    text: str
    result: AnalysisResult  # with facts (tree, kinds) when the text parses: the fixers need them
    findings: list[Finding]  # what is shown: the result's, or GM000 plus the last good ones
    config: Config
    generation: int = 0  # the server's settings generation it was made under
    lines: list[str] = field(init=False)
    ending: str = field(init=False)

    def __post_init__(self) -> None:
        self.lines = SourceFile(self.text).lines
        self.ending = line_ending(self.text)
        self._plans: dict[tuple[int, Safety], Fix | Declined] = {}
        self._fixed: FileFix | None = None
        self._context: FixContext | None = None
        self._lock = threading.Lock()

    def plan(self, index: int, level: Safety) -> Fix | Declined:
        """The rewrite of `findings[index]` (planned once per version: a lightbulb asks often)."""
        with self._lock:
            cached = self._plans.get((index, level))
            if cached is None:
                if self._context is None:
                    self._context = FixContext(self.result)
                cached = plan_fix(self.findings[index], self._context, level)
                self._plans[(index, level)] = cached
            return cached

    def fixed(self, path: str) -> FileFix:
        """Every safe fix of this version, to a fixed point (fix-all), computed once."""
        with self._lock:
            if self._fixed is None:
                self._fixed = fix_source(self.text, path, self.config)
            return self._fixed

    @property
    def parses(self) -> bool:
        return self.result.tree is not None

    def own_findings(self) -> list[tuple[int, Finding]]:
        """The shown findings found in this text, by index: not those kept from the last version
        that parsed (their positions are not this text's), which get no fix or hover."""
        own = self.result.findings
        return [(i, f) for i, f in enumerate(self.findings) if i < len(own) and own[i] is f]


def editor_config(config: Config, settings: Settings) -> Config:
    """The file's configuration with the editor's overrides."""
    return config.with_overrides(
        select=settings.select, ignore=settings.ignore, compile_forward=settings.compile_forward, check_uncompiled=settings.check_uncompiled
    )


class DocumentStore:
    """The latest analysis of every open document, and the findings of its last version that parsed."""

    def __init__(self) -> None:
        self._analyses: dict[str, Analysis] = {}
        self._last_good: dict[str, list[Finding]] = {}
        self._lock = threading.Lock()

    def get(self, uri: str) -> Analysis | None:
        with self._lock:
            return self._analyses.get(uri)

    def current(self, uri: str, version: int | None) -> Analysis | None:
        """The stored analysis when it is of `version` (None: any)."""
        analysis = self.get(uri)
        if analysis is None or (version is not None and analysis.version != version):
            return None
        return analysis

    def analyze(self, uri: str, version: int | None, text: str, path: str, config: Config, generation: int = 0) -> Analysis:
        """Analyse one version and store it, unless a newer version was stored meanwhile."""
        result = analyze_detailed(text, path, config, keep_facts=True)
        with self._lock:
            if result.tree is not None:
                findings = list(result.findings)
                self._last_good[uri] = findings
            else:
                kept = [f for f in self._last_good.get(uri, []) if f.code != PARSE_ERROR_CODE]
                findings = [*result.findings, *kept]
            analysis = Analysis(uri, version, text, result, findings, config, generation)
            stored = self._analyses.get(uri)
            if stored is None or stored.version is None or version is None or version >= stored.version:
                self._analyses[uri] = analysis
        return analysis

    def forget(self, uri: str) -> None:
        with self._lock:
            self._analyses.pop(uri, None)
            self._last_good.pop(uri, None)

    def uris(self) -> list[str]:
        with self._lock:
            return list(self._analyses)


def path_of(uri: str) -> Path | None:
    """The file system path of a `file:` URI (None for untitled buffers and other schemes)."""
    from pygls.uris import to_fs_path

    path = to_fs_path(uri)
    return Path(path) if path else None


def display_name(uri: str) -> str:
    path = path_of(uri)
    if path is None:
        return uri
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
