"""Run `worker.py` with the user's interpreter and turn what it prints into a `RuntimeReport`.

The worker runs in its own process (and session, so a timeout or a cancel kills everything it
started): user code may hang, crash the interpreter, or print to stdout. Every way it can fail
becomes a `ConfirmError` with a message that says which stage failed and why, never a hang.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .samples import Sample

WORKER = Path(__file__).with_name("worker.py")
_LIVE: set[subprocess.Popen] = set()  # workers running now: killed if this process exits first
_DOC_URL = re.compile(r"https://\S+/gb\d{4}\.html")
_STAGES = {
    "import": "importing the target's module failed",
    "factory": "the sample factory raised",
    "call": "the compiled call raised",
}


class ConfirmError(RuntimeError):
    """The run could not give an answer: `stage` is import, factory, crash, timeout or cancelled."""

    def __init__(self, stage: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.stage = stage
        self.detail = detail  # the traceback or stderr tail, for logs


@dataclass(frozen=True)
class RuntimeBreak:
    """One place dynamo broke, located in the user's files (repeats of the same site merged)."""

    path: Path
    line: int
    summary: str
    explanation: str
    hints: tuple[str, ...]
    gb_id: str | None
    frame_skip: bool
    rest_eager: bool
    function: str
    url: str | None
    records: int = 1


@dataclass
class RuntimeReport:
    sample: Sample
    torch: str
    device: str
    gpu: str | None
    graphs: int
    ops_per_graph: list[int]
    breaks: list[RuntimeBreak]
    skipped_frames: list[dict[str, Any]]
    coverage: dict[Path, set[int]]
    timings: dict[str, float]
    error: str | None = None  # the compiled call raised after the breaks were recorded
    warnings: list[str] = field(default_factory=list)
    stdout: str = ""

    @property
    def break_count(self) -> int:
        return len(self.breaks)


@dataclass(frozen=True)
class RunOptions:
    python: str = ""  # "" = this interpreter
    timeout_s: float = 300.0
    device: str = "auto"


def command_for(sample: Sample, options: RunOptions) -> list[str]:
    return [
        options.python or sys.executable,
        str(WORKER),
        "--sample",
        sample.factory.text,
        "--target",
        sample.target.text,
        "--root",
        str(sample.root),
        "--device",
        options.device,
    ]


def run_sample(sample: Sample, options: RunOptions, should_stop: Callable[[], bool] = lambda: False) -> RuntimeReport:
    """Run the worker for `sample` and parse its report. Blocks; polls `should_stop` (a cancel)."""
    if not sample.factory.path.is_file():
        raise ConfirmError("import", f"the sample factory's file does not exist: {sample.factory.path}")
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(filter(None, [str(sample.root), os.environ.get("PYTHONPATH")])))
    try:
        process = subprocess.Popen(
            command_for(sample, options),
            cwd=sample.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
    except OSError as exc:
        raise ConfirmError("crash", f"cannot start {options.python or sys.executable}: {exc}") from exc
    deadline = time.monotonic() + options.timeout_s
    _LIVE.add(process)
    try:
        while True:
            try:
                stdout, stderr = process.communicate(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if should_stop():
                    _kill(process)
                    raise ConfirmError("cancelled", f"confirmation of {sample.label} was cancelled") from None
                if time.monotonic() > deadline:
                    _kill(process)
                    raise ConfirmError(
                        "timeout", f"confirmation of {sample.label} took longer than {options.timeout_s:g} s and was stopped"
                    ) from None
    finally:
        _LIVE.discard(process)
    if should_stop():  # killed by a shutdown while finishing: a cancel, not a crash
        raise ConfirmError("cancelled", f"confirmation of {sample.label} was cancelled")
    return parse_output(sample, process.returncode, stdout, stderr)


@atexit.register
def kill_all() -> None:
    """Stop every worker still running (the server is exiting, or was told to shut down)."""
    for process in list(_LIVE):
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                process.kill()


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (read from /proc; empty where there is none). A sample's code can
    start processes in sessions of their own, out of reach of the worker's process group; the
    worker adopts their orphans (it is a child subreaper, see worker.py), so they stay below it."""
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    frontier = [pid]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found += children
        frontier += children
    return found


def _kill(process: subprocess.Popen) -> None:
    for pid in descendants(process.pid):  # those that left the worker's session too
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a grandchild in a session of its own holds the pipes
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        process.wait(timeout=5)


def parse_output(sample: Sample, returncode: int, stdout: str, stderr: str) -> RuntimeReport:
    """The worker's last JSON line -> a report, or ConfirmError for every way it can fail."""
    payload = _last_json(stdout)
    tail = stderr[-4000:]
    if payload is None:
        if returncode < 0:
            why = f"was killed by signal {signal.Signals(-returncode).name}" if -returncode in signal.Signals._value2member_map_ else f"died ({returncode})"
        else:
            why = f"exited with code {returncode} without a report"
        raise ConfirmError("crash", f"the TorchDynamo worker for {sample.label} {why}" + (f": {_last_line(tail)}" if tail.strip() else ""), tail)
    if not payload.get("ok"):
        stage = str(payload.get("stage", "crash"))
        raise ConfirmError(stage, f"{_STAGES.get(stage, 'the run failed')} for {sample.label}: {payload.get('error')}", str(payload.get("traceback", "")))
    return RuntimeReport(
        sample=sample,
        torch=str(payload.get("torch", "")),
        device=str(payload.get("device", "cpu")),
        gpu=payload.get("gpu"),
        graphs=int(payload.get("graphs", 0)),
        ops_per_graph=list(payload.get("ops_per_graph", [])),
        breaks=merge_breaks(payload.get("breaks", []), sample.root),
        skipped_frames=list(payload.get("skipped_frames", [])),
        coverage={Path(name): set(lines) for name, lines in (payload.get("coverage") or {}).items()},
        timings=dict(payload.get("timings", {})),
        error=payload.get("error"),
        warnings=list(payload.get("warnings", [])),
        stdout=str(payload.get("stdout", "")),
    )


def _last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line of user output that only looks like JSON
            if isinstance(value, dict) and "ok" in value:
                return value
    return None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _user_frame(record: dict[str, Any], root: Path) -> tuple[Path, int, str]:
    """The innermost frame of the break inside the user's tree (not site-packages, not the
    worker); the location dynamo reports when there is none."""
    root_text = str(root.resolve()) + os.sep
    for frame in reversed(record.get("stack", [])):
        real = os.path.realpath(frame["file"])
        if real.startswith(root_text) and "site-packages" not in real and real != str(WORKER.resolve()):
            return Path(real), int(frame["line"]), str(frame.get("function", ""))
    return Path(os.path.realpath(record["file"])), int(record["line"]), ""


def merge_breaks(records: list[dict[str, Any]], root: Path) -> list[RuntimeBreak]:
    """One RuntimeBreak per (file, line): a frame skip logs the same site twice, a layer run N
    times logs it N times."""
    merged: dict[tuple[Path, int], RuntimeBreak] = {}
    for record in records:
        path, line, function = _user_frame(record, root)
        urls = _DOC_URL.findall(record.get("reason", ""))
        current = RuntimeBreak(
            path=path,
            line=line,
            summary=str(record.get("summary", "")),
            explanation=str(record.get("explanation", "")),
            hints=tuple(record.get("hints", [])),
            gb_id=record.get("gb_id"),
            frame_skip=bool(record.get("frame_skip")),
            rest_eager=bool(record.get("rest_eager")),
            function=function,
            url=urls[0] if urls else None,
        )
        previous = merged.get((path, line))
        if previous is None:
            merged[(path, line)] = current
        else:  # keep the first record's reason, gather what the later ones add
            merged[(path, line)] = replace(
                previous,
                frame_skip=previous.frame_skip or current.frame_skip,
                rest_eager=previous.rest_eager or current.rest_eager,
                hints=previous.hints + tuple(h for h in current.hints if h not in previous.hints),
                records=previous.records + 1,
            )
    return sorted(merged.values(), key=lambda b: (str(b.path), b.line))
