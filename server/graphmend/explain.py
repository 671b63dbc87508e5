"""`graphmend explain TARGET`: run real TorchDynamo on the target's sample input and set what it
did (graphs, breaks with their source lines, dynamo's reasons and hints) against the static
findings.

Exit codes: 0 dynamo did not break, 1 it did, 2 the run could not answer (no sample configured,
the module failed to import, the factory raised, the worker crashed or timed out).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

from .analysis import analyze
from .config import ConfigError, ConfigResolver, load_config
from .files import read_source
from .findings import Finding
from .runtime.compare import Comparison, Mark, compare, files_to_compare, static_findings
from .runtime.runner import ConfirmError, RunOptions, RuntimeBreak, RuntimeReport, run_sample
from .runtime.samples import SampleError, find_sample

EXIT_CLEAN, EXIT_BREAKS, EXIT_USAGE = 0, 1, 2


def add_parser(commands: Any) -> None:
    explain = commands.add_parser(
        "explain",
        help="run TorchDynamo on a sample input and compare its graph breaks with the static findings",
        description=(
            "Compile TARGET (path.py:Name) on the sample input its factory builds, record every graph break "
            "from dynamo's graph_breaks log, and mark each static finding confirmed, not seen or not reached. "
            "The factory comes from --sample or [tool.graphmend.samples] and returns (callable, args, kwargs). "
            "Exit status: 0 no break, 1 breaks, 2 the run failed."
        ),
    )
    explain.add_argument("target", help="path/to/file.py:Name of the compiled class, function or Class.method")
    explain.add_argument("--sample", metavar="FACTORY", help="path/to/file.py:factory (default: from [tool.graphmend.samples])")
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--python", default="", help="interpreter to run the target with (default: this one)")
    explain.add_argument("--timeout", type=float, default=600.0, help="seconds before the run is stopped (default: 600)")
    explain.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="passed to a factory that takes `device`")
    explain.add_argument("--config", type=Path, help="a pyproject.toml to read [tool.graphmend] from")


def run_explain(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    target_file = Path(args.target.rpartition(":")[0] or args.target)
    resolver = ConfigResolver()
    try:
        config = load_config(args.config) if args.config is not None else resolver.require(target_file if target_file.exists() else cwd)
        sample = find_sample(args.target, config, cwd, args.sample)
    except (ConfigError, SampleError) as exc:
        print(f"graphmend: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not sample.target.path.is_file():
        print(f"graphmend: {sample.target.path} does not exist", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = run_sample(sample, RunOptions(python=args.python, timeout_s=args.timeout, device=args.device))
    except ConfirmError as exc:
        print(f"graphmend: {exc}", file=sys.stderr)
        if exc.detail:
            print(exc.detail.rstrip(), file=sys.stderr)
        return EXIT_USAGE

    def analyze_path(path: Path) -> list[Finding] | None:
        source = read_source(path, config.max_file_bytes)
        if source.text is None:
            return None
        try:  # --config applies to every file; otherwise each file's own pyproject.toml
            file_config = config if args.config is not None else resolver.require(path)
        except ConfigError:
            file_config = config
        return analyze(source.text, str(path), file_config)

    comparison = compare(report, static_findings(files_to_compare(report), analyze_path))
    if args.format == "json":
        json.dump(to_json(report, comparison), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(report, comparison))
    if report.error and not report.breaks:  # it raised before any break: no answer either way
        return EXIT_USAGE
    return EXIT_BREAKS if report.breaks else EXIT_CLEAN


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


@functools.lru_cache(maxsize=64)
def _file_lines(path: Path) -> tuple[str, ...]:
    try:
        return tuple(path.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return ()


def _source_line(path: Path, line: int) -> str:
    lines = _file_lines(path)
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def first_clause(message: str, limit: int = 110) -> str:
    """A finding's message up to its explanation (`` `subject` does X: dynamo ... ``), for
    one-line listings; a `: ` inside the quoted subject does not count."""
    start = message.index("`", 1) + 1 if message.startswith("`") and "`" in message[1:] else 0
    cut = message.find(": ", start)
    head = message[:cut] if cut != -1 else message
    return head if len(head) <= limit else head[: limit - 1] + "…"


def headline(report: RuntimeReport) -> str:
    where = report.device + (f" ({report.gpu})" if report.gpu else "")
    breaks = report.break_count
    return (
        f"TorchDynamo: {report.graphs} graph{'s' if report.graphs != 1 else ''}, {breaks} break site{'s' if breaks != 1 else ''} "
        f"on {where}, torch {report.torch}; first call {report.timings.get('first_call_s', 0):.2f} s"
    )


def render_text(report: RuntimeReport, comparison: Comparison) -> str:
    out = [f"{report.sample.label}: {headline(report)}"]
    if report.error:
        out.append(f"  the compiled call raised {report.error}; the breaks before it are listed")
    predicted = {(m.path, m.runtime.line): m for m in comparison.marked if m.runtime is not None}
    for runtime in report.breaks:
        marked = predicted.get((runtime.path, runtime.line))
        status = f"predicted by {marked.finding.code}" if marked else "runtime-only: no static finding"
        effect = " (whole function run eagerly)" if runtime.frame_skip else (" (rest of the function eager)" if runtime.rest_eager else "")
        out.append(f"{_display(runtime.path)}:{runtime.line}: {runtime.gb_id or 'break'} {runtime.summary}{effect} [{status}]")
        code = _source_line(runtime.path, runtime.line)
        if code:
            out.append(f"    {code}")
        for hint in runtime.hints[:2]:
            out.append(f"    hint: {hint}")
    for mark in (Mark.NOT_SEEN, Mark.SKIPPED_FRAME, Mark.NOT_REACHED):
        items = [m for m in comparison.marked if m.mark is mark]
        if items:
            out.append(f"static findings {mark.describe}:")
            out.extend(f"  {_display(m.path)}:{m.finding.span.start_line}: {m.finding.code} {first_clause(m.finding.message)}" for m in items)
    for frame in report.skipped_frames:
        out.append(f"dynamo skipped the frame of {frame.get('function')} ({_display(Path(frame.get('file', '')))}:{frame.get('line')})")
    for warning in report.warnings:
        out.append(f"warning: {warning}")
    out.append(f"summary: {comparison.summary()}")
    return "\n".join(out) + "\n"


def break_json(runtime: RuntimeBreak) -> dict[str, Any]:
    return {
        "path": str(runtime.path),
        "line": runtime.line,
        "gb_id": runtime.gb_id,
        "summary": runtime.summary,
        "explanation": runtime.explanation,
        "hints": list(runtime.hints),
        "url": runtime.url,
        "frame_skip": runtime.frame_skip,
        "rest_eager": runtime.rest_eager,
        "function": runtime.function,
        "records": runtime.records,
    }


def to_json(report: RuntimeReport, comparison: Comparison) -> dict[str, Any]:
    return {
        "target": report.sample.label,
        "torch": report.torch,
        "device": report.device,
        "gpu": report.gpu,
        "graphs": report.graphs,
        "ops_per_graph": report.ops_per_graph,
        "breaks": [break_json(b) for b in report.breaks],
        "skipped_frames": report.skipped_frames,
        "timings": report.timings,
        "error": report.error,
        "warnings": report.warnings,
        "findings": [
            {
                "path": str(m.path),
                "line": m.finding.span.start_line,
                "column": m.finding.span.start_col + 1,
                "code": m.finding.code,
                "message": m.finding.message,
                "mark": m.mark.value,
                "gb_id": m.runtime.gb_id if m.runtime else None,
            }
            for m in comparison.marked
        ],
        "runtime_only": [break_json(b) for b in comparison.runtime_only],
        "summary": {
            "confirmed": comparison.count(Mark.CONFIRMED),
            "runtime_only": len(comparison.runtime_only),
            "not_seen": comparison.count(Mark.NOT_SEEN) + comparison.count(Mark.SKIPPED_FRAME),
            "not_reached": comparison.count(Mark.NOT_REACHED),
        },
    }
