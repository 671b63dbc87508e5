"""Compiled regions across open documents (the shared engine is crossmodule.py): for each analysed
document, what its compiled functions call in other workspace files is recorded per caller, and
those files are analysed again with the targets as extra compiled entries. Only what changed is
resolved again: the call sites of a document are compared before jedi runs.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..crossmodule import CallSite, resolve
from ..crossmodule import call_sites as _call_sites
from .documents import Analysis

__all__ = ["CallSite", "CrossFileIndex", "call_sites", "resolve"]


def call_sites(analysis: Analysis) -> tuple[CallSite, ...]:
    """Calls made by the document's compiled functions to names it imports from elsewhere."""
    return _call_sites(analysis.result, analysis.text)


class CrossFileIndex:
    """Which functions of which file are called from compiled code elsewhere, by caller file."""

    def __init__(self) -> None:
        self._by_caller: dict[Path, dict[Path, dict[str, str]]] = {}
        self._sites: dict[Path, tuple[CallSite, ...]] = {}
        self._lock = threading.Lock()

    def unchanged(self, caller: Path, sites: tuple[CallSite, ...]) -> bool:
        with self._lock:
            return self._sites.get(caller) == sites

    def update(self, caller: Path, sites: tuple[CallSite, ...], targets: dict[Path, dict[str, str]]) -> set[Path]:
        """Record a caller's targets; returns the target files whose extra entries changed."""
        with self._lock:
            before = self._by_caller.get(caller, {})
            self._sites[caller] = sites
            self._by_caller[caller] = targets
            return {p for p in set(before) | set(targets) if before.get(p) != targets.get(p)}

    def forget(self, caller: Path) -> set[Path]:
        return self.update(caller, (), {})

    def entries_for(self, path: Path) -> tuple[tuple[str, str], ...]:
        """Extra compiled entries of `path`, from every caller recorded."""
        resolved = path.resolve()
        merged: dict[str, str] = {}
        with self._lock:
            for targets in self._by_caller.values():
                for qualified, reason in targets.get(resolved, {}).items():
                    merged.setdefault(qualified, reason)
        return tuple(sorted(merged.items()))
