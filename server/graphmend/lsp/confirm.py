"""Runtime confirmation in the editor: what the last TorchDynamo run of each sample found, and how
that shows up in diagnostics and code lenses.

A run's marks belong to the text of each file it ran (dynamo imports the saved file). They are
shown while the document's text is still that text, and disappear as soon as it is edited: a
mark on a shifted line would be worse than none. Runtime-only breaks (dynamo broke where no
static rule fired) become diagnostics of their own, with dynamo's reason, hints and the link to
its graph-break page.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..runtime.compare import Comparison, Mark, MarkedFinding
from ..runtime.runner import RuntimeBreak, RuntimeReport
from ..runtime.samples import Sample, definition_line
from .convert import SOURCE, client_position

CONFIRM = "graphmend.confirm"
RUNTIME_SOURCE = f"{SOURCE} (TorchDynamo)"


@dataclass
class ConfirmRun:
    report: RuntimeReport
    comparison: Comparison
    texts: dict[Path, str]  # the text of each compared file when dynamo ran it
    previous: tuple[int, int] | None = None  # (graphs, break sites) of the run before this one

    def counts(self) -> tuple[int, int]:
        return self.report.graphs, self.report.break_count

    def describe(self) -> str:
        graphs, breaks = self.counts()
        text = f"TorchDynamo: {graphs} graph{'s' if graphs != 1 else ''}, {breaks} break{'s' if breaks != 1 else ''} on {self.report.device}"
        if self.previous is not None and self.previous != (graphs, breaks):
            text += f" (was {self.previous[0]} graph{'s' if self.previous[0] != 1 else ''}, {self.previous[1]} break{'s' if self.previous[1] != 1 else ''})"
        return text


@dataclass
class RuntimeStore:
    """The last run per sample, and the stop flags of the runs in progress."""

    runs: dict[str, ConfirmRun] = field(default_factory=dict)
    running: dict[str, threading.Event] = field(default_factory=dict)
    generation: int = 0  # bumped on every finished run: pull result ids must change
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, key: str) -> threading.Event | None:
        """A stop flag for a new run of `key`, or None when one is already running."""
        with self._lock:
            if key in self.running:
                return None
            flag = threading.Event()
            self.running[key] = flag
            return flag

    def finish(self, key: str, run: ConfirmRun | None) -> None:
        with self._lock:
            self.running.pop(key, None)
            if run is not None:
                previous = self.runs.get(key)
                if previous is not None:
                    run.previous = previous.counts()
                self.runs[key] = run
                self.generation += 1

    def stop_all(self) -> None:
        with self._lock:
            for flag in self.running.values():
                flag.set()

    def for_text(self, path: Path, text: str) -> list[ConfirmRun]:
        """The runs whose view of `path` is `text` (so their lines still mean the same)."""
        resolved = path.resolve()
        return [run for run in list(self.runs.values()) if run.texts.get(resolved) == text]


def decorate(
    diagnostics: list[types.Diagnostic],
    runs: Sequence[ConfirmRun],
    path: Path,
    uri: str,
    codec: PositionCodec,
    lines: Sequence[str],
) -> list[types.Diagnostic]:
    """The static diagnostics with each run's mark appended, plus the runtime-only breaks."""
    if not runs:
        return diagnostics
    marks: dict[tuple[str, int], MarkedFinding] = {}
    extra: list[types.Diagnostic] = []
    for run in runs:
        marked, runtime_only = run.comparison.for_path(path)
        for item in marked:
            key = (item.finding.code, item.finding.span.start_line)
            if key not in marks or item.mark is Mark.CONFIRMED:
                marks[key] = item
        extra.extend(runtime_diagnostic(b, run.report, codec, lines) for b in runtime_only)
    for diagnostic in diagnostics:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        marked_item = marks.get((str(diagnostic.code), int(data.get("line", -1))))
        if marked_item is None:
            continue
        detail = f" ({marked_item.runtime.gb_id})" if marked_item.runtime is not None and marked_item.runtime.gb_id else ""
        diagnostic.message = f"{diagnostic.message}\n[{marked_item.mark.describe}{detail}]"
        diagnostic.data = {**data, "runtime": marked_item.mark.value}
    return diagnostics + extra


def runtime_diagnostic(runtime: RuntimeBreak, report: RuntimeReport, codec: PositionCodec, lines: Sequence[str]) -> types.Diagnostic:
    """A break only dynamo saw: the whole (stripped) line, dynamo's words, its first hints."""
    index = runtime.line - 1
    text = lines[index] if 0 <= index < len(lines) else ""
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip("\r\n"))
    effect = " Dynamo ran the whole function eagerly." if runtime.frame_skip else ""
    hints = "".join(f"\nHint: {hint}" for hint in runtime.hints[:2])
    message = (
        f"TorchDynamo breaks the graph here ({report.device}, torch {report.torch}), no static rule predicted it: "
        f"{runtime.summary}. {runtime.explanation}{effect}{hints}"
    )
    return types.Diagnostic(
        range=types.Range(
            start=client_position(codec, lines, runtime.line, start), end=client_position(codec, lines, runtime.line, end)
        ),
        message=message,
        severity=types.DiagnosticSeverity.Error if runtime.frame_skip else types.DiagnosticSeverity.Warning,
        code=runtime.gb_id or "dynamo",
        code_description=types.CodeDescription(href=runtime.url) if runtime.url else None,
        source=RUNTIME_SOURCE,
        data={"runtime": "runtime-only", "line": runtime.line},
    )


def code_lenses(samples: Sequence[Sample], text: str, store: RuntimeStore, codec: PositionCodec, lines: Sequence[str]) -> list[types.CodeLens]:
    """A "Confirm with TorchDynamo" lens on the definition of each target that has a sample."""
    if not samples:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []  # half-typed code: the lens comes back when it parses
    lenses = []
    for sample in samples:
        line = definition_line(tree, sample.target.name)
        if line is None:
            continue
        key = sample.key()
        run = store.runs.get(key)
        if key in store.running:
            title = "TorchDynamo: running… (cancel from the progress notification)"
        elif run is not None:
            title = f"{run.describe()} · Confirm again"
        else:
            title = "Confirm with TorchDynamo"
        position = client_position(codec, lines, line, 0)
        lenses.append(
            types.CodeLens(
                range=types.Range(start=position, end=position),
                command=types.Command(title=title, command=CONFIRM, arguments=[{"target": key}]),
            )
        )
    return lenses


def run_summary(run: ConfirmRun) -> dict[str, Any]:
    """The command's answer for one run (also what tests and scripts read)."""
    comparison = run.comparison
    return {
        "target": run.report.sample.label,
        "graphs": run.report.graphs,
        "breaks": run.report.break_count,
        "device": run.report.device,
        "gpu": run.report.gpu,
        "torch": run.report.torch,
        "previous": list(run.previous) if run.previous is not None else None,
        "confirmed": comparison.count(Mark.CONFIRMED),
        "runtime_only": len(comparison.runtime_only),
        "not_seen": comparison.count(Mark.NOT_SEEN) + comparison.count(Mark.SKIPPED_FRAME),
        "not_reached": comparison.count(Mark.NOT_REACHED),
        "timings": run.report.timings,
        "error": run.report.error,
    }
