"""Line the static findings up with the breaks real TorchDynamo reported for a sample.

Each finding gets a mark: *confirmed* (dynamo broke on its line), *not reached* (the sample's eager
call never ran the line, so the run says nothing about it), *in a skipped frame* (dynamo gave up on
the whole function earlier and ran it eagerly), or *not seen* (the line ran and dynamo did not break
there: a likely false positive, or a break that depends on the input). Breaks no finding predicted
are *runtime-only*.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding
from .runner import RuntimeBreak, RuntimeReport


class Mark(str, enum.Enum):
    CONFIRMED = "confirmed"
    NOT_SEEN = "not-seen"
    NOT_REACHED = "not-reached"
    SKIPPED_FRAME = "skipped-frame"

    @property
    def describe(self) -> str:
        return {
            Mark.CONFIRMED: "confirmed by TorchDynamo",
            Mark.NOT_SEEN: "not seen by TorchDynamo: the line ran and did not break",
            Mark.NOT_REACHED: "not reached by the sample input",
            Mark.SKIPPED_FRAME: "not seen: TorchDynamo skipped this function and ran it eagerly",
        }[self]


@dataclass(frozen=True)
class MarkedFinding:
    path: Path
    finding: Finding
    mark: Mark
    runtime: RuntimeBreak | None = None


@dataclass
class Comparison:
    marked: list[MarkedFinding] = field(default_factory=list)
    runtime_only: list[RuntimeBreak] = field(default_factory=list)

    def count(self, mark: Mark) -> int:
        return sum(1 for m in self.marked if m.mark is mark)

    def summary(self) -> str:
        return (
            f"{self.count(Mark.CONFIRMED)} confirmed, {len(self.runtime_only)} runtime-only, "
            f"{self.count(Mark.NOT_SEEN) + self.count(Mark.SKIPPED_FRAME)} not seen, {self.count(Mark.NOT_REACHED)} not reached"
        )

    def for_path(self, path: Path) -> tuple[list[MarkedFinding], list[RuntimeBreak]]:
        resolved = path.resolve()
        return [m for m in self.marked if m.path == resolved], [b for b in self.runtime_only if b.path == resolved]


def files_to_compare(report: RuntimeReport) -> list[Path]:
    """The target's file and every file under the sample's root that a break was located in."""
    root = report.sample.root.resolve()
    paths = [report.sample.target.path]
    for runtime in report.breaks:
        if runtime.path not in paths and runtime.path.suffix == ".py" and runtime.path.is_file() and runtime.path.is_relative_to(root):
            paths.append(runtime.path)
    return paths


def compare(report: RuntimeReport, findings: dict[Path, list[Finding]]) -> Comparison:
    """Mark every finding of `findings` (keyed by resolved path) against the report."""
    comparison = Comparison()
    matched: set[tuple[Path, int]] = set()
    for path, path_findings in findings.items():
        path = path.resolve()
        breaks = [b for b in report.breaks if b.path == path]
        covered = report.coverage.get(path)
        for finding in path_findings:
            if finding.code == "GM000":
                continue
            runtime = _matching_break(finding, breaks)
            if runtime is not None:
                matched.add((runtime.path, runtime.line))
                comparison.marked.append(MarkedFinding(path, finding, Mark.CONFIRMED, runtime))
                continue
            lines = range(finding.span.start_line, finding.span.end_line + 1)
            if report.coverage and not (covered and any(line in covered for line in lines)):
                mark = Mark.NOT_REACHED
            elif _in_skipped_frame(finding, path, report):
                mark = Mark.SKIPPED_FRAME
            else:
                mark = Mark.NOT_SEEN
            comparison.marked.append(MarkedFinding(path, finding, mark))
    comparison.runtime_only = [b for b in report.breaks if (b.path, b.line) not in matched]
    return comparison


def _matching_break(finding: Finding, breaks: list[RuntimeBreak]) -> RuntimeBreak | None:
    exact = [b for b in breaks if b.line in (finding.span.start_line, finding.break_line)]
    if exact:
        return exact[0]
    return next((b for b in breaks if finding.covers_line(b.line)), None)


_RESUME = re.compile(r"^torch_dynamo_resume_in_(\w+)_at_(\d+)$")


def _in_skipped_frame(finding: Finding, path: Path, report: RuntimeReport) -> bool:
    """Whether dynamo gave up on the finding's function before its line: a skipped frame is the
    function itself, or its resume function (`torch_dynamo_resume_in_forward_at_50`: the part
    of `forward` after line 50)."""
    name = finding.function.rsplit(".", 1)[-1]
    for frame in report.skipped_frames:
        if Path(str(frame.get("file", ""))).resolve() != path:
            continue
        function, start = str(frame.get("function", "")), int(frame.get("line", 0))
        resume = _RESUME.match(function)
        if resume is not None:
            function, start = resume.group(1), int(resume.group(2))
        if function == name and finding.span.start_line >= start:
            return True
    return False


def static_findings(paths: list[Path], analyze_path: Callable[[Path], list[Finding] | None]) -> dict[Path, list[Finding]]:
    """The findings of each path that could be analysed (`analyze_path` returns None otherwise)."""
    found: dict[Path, list[Finding]] = {}
    for path in paths:
        result = analyze_path(path)
        if result is not None:
            found[path.resolve()] = result
    return found
