"""Run a corpus case through the analyser and through real TorchDynamo, and compare.

A case is a complete module. Lines where dynamo breaks carry `# expect: GM101` (several codes
separated by commas). `sample()` returns `(callable, args, kwargs)` or a list of such triples, so a
case can reach several branch outcomes; without it, the compiled function `f` is called with
`torch.randn(4)`. `GRAPHMEND_CONFIG = {"compile-forward": False}` at module level sets options. Functions already wrapped by `@torch.compile` are unwrapped and recompiled with
a graph-counting backend.

Functions nothing in the case compiles may still be reported, `if_compiled`, as breaks should they
be compiled (analysis/uncompiled.py): those lines carry `# expect if compiled: GM201`, and the case's
`sample_if_compiled()` returns callables that compile them, so that dynamo confirms each such finding.

Agreement means, for the lines of the case file:
- the analyser reports exactly the marked (line, code) pairs;
- every break dynamo logs lies inside the span of a finding, and every finding covers a logged
  break (a finding with effect "silent-skip" instead requires that dynamo compiled nothing);
- the cost agrees: a finding says "frame-skip" exactly when dynamo logs that it skips the
  function there, and "rest-eager" when dynamo says it cannot resume (or, for a break before the
  first traced op, that it skips the function: the rest of it is all of it).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import sys
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphmend import Config, analyze
from graphmend.analysis.rules.dynamo_ids import CONTEXT_IDS, gb_ids_for
from graphmend.config import config_from_table
from graphmend.findings import Finding
from graphmend.runtime.worker import capture, locate

EXPECT = re.compile(r"#\s*expect:\s*(GM\d{3}(?:\s*,\s*GM\d{3})*)")
EXPECT_IF_COMPILED = re.compile(r"#\s*expect if compiled:\s*(GM\d{3}(?:\s*,\s*GM\d{3})*)")


def expected_findings(source: str, marker: re.Pattern[str] = EXPECT) -> set[tuple[int, str]]:
    expected = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = marker.search(line)
        if match:
            expected |= {(number, code.strip()) for code in match.group(1).split(",")}
    return expected


@dataclass
class Observed:
    lines: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # line -> records there
    elsewhere: list[dict[str, Any]] = field(default_factory=list)  # breaks outside the case file
    graphs: int = 0
    errors: list[str] = field(default_factory=list)


def _unwrap(fn: Any) -> Any:
    """The plain function or module under a torch.compile wrapper. A compiled module is unwrapped to
    the module, not to the `forward` its wrapper names as `_torchdynamo_orig_callable`: compiling
    the module runs its `__call__`, which a class may override (GPyTorch's ExactGP)."""
    if hasattr(fn, "_orig_mod"):
        return fn._orig_mod
    return getattr(fn, "_torchdynamo_orig_callable", fn)


def import_case(path: Path) -> Any:
    name = f"graphmend_case_{path.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def samples(module: Any, factory: str = "sample") -> list[tuple[Any, tuple, dict]]:
    import torch

    if hasattr(module, factory):
        produced = getattr(module, factory)()
        triples = produced if isinstance(produced, list) else [produced]
    elif factory == "sample":
        triples = [(module.f, (torch.randn(4),), {})]
    else:
        triples = []
    return [(_unwrap(fn), tuple(args), dict(kwargs or {})) for fn, args, kwargs in triples]


def run_dynamo(path: Path, factory: str = "sample") -> Observed:
    """What dynamo logs compiling the callables the case's `factory` returns."""
    import torch._dynamo.config as dynamo_config

    snapshot = dynamo_config.get_config_copy()  # a case may set process-wide flags
    try:
        return _run_dynamo(path, factory)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dynamo_config.load_config(snapshot)


def _run_dynamo(path: Path, factory: str) -> Observed:
    module = import_case(path)
    observed = Observed()
    case_file = {os.path.realpath(path)}
    for fn, args, kwargs in samples(module, factory):
        quiet = io.StringIO()
        stdin, sys.stdin = sys.stdin, io.StringIO("c\n" * 50)  # input() and pdb read from here
        try:
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = capture(fn, args, kwargs)
        finally:
            sys.stdin = stdin
        observed.graphs += result["graphs"]
        if result["error"]:
            observed.errors.append(result["error"])
        for record in result["breaks"]:
            file, line = locate(record, case_file)
            if os.path.realpath(file) in case_file:
                observed.lines.setdefault(line, []).append(record)
            elif not record["duplicate"]:
                observed.elsewhere.append(record)
    return observed


def case_config(source: str) -> Config:
    """A case may set `GRAPHMEND_CONFIG = {...}` ([tool.graphmend] keys) at module level."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "GRAPHMEND_CONFIG" for t in node.targets):
            return config_from_table(ast.literal_eval(node.value), "GRAPHMEND_CONFIG")
    return Config()


def disagreements(path: Path, source: str) -> list[str]:
    """Everything on which the markers, the analyser and dynamo disagree (empty when they agree)."""
    problems: list[str] = []
    everything = analyze(source, str(path), case_config(source), strict=True)
    findings = [f for f in everything if not f.if_compiled]
    problems += _if_compiled_disagreements(path, source, everything)
    predicted = {(f.span.start_line, f.code) for f in findings}
    expected = expected_findings(source)
    for line, code in sorted(expected - predicted):
        problems.append(f"line {line}: marked {code}, but the analyser does not report it")
    for line, code in sorted(predicted - expected):
        message = next(f.message for f in findings if (f.span.start_line, f.code) == (line, code))
        problems.append(f"line {line}: the analyser reports {code} without a marker: {message}")

    observed = run_dynamo(path)
    for record in observed.elsewhere:
        problems.append(f"dynamo broke outside the case file at {record['file']}:{record['line']}: {record['summary']}")
    covered: set[int] = set()
    for finding in findings:
        span_lines = [line for line in observed.lines if finding.covers_line(line)]
        covered.update(span_lines)
        records = [r for line in span_lines for r in observed.lines[line]]
        where = f"line {finding.span.start_line} {finding.code}"
        if finding.latent:  # after a break that makes dynamo run the function eagerly: not reached
            if records:
                problems.append(f"{where}: marked latent, but dynamo breaks there: {_reasons(records)}")
            continue
        if finding.effect == "silent-skip":
            if observed.graphs:
                problems.append(f"{where}: claims dynamo compiles nothing, but it compiled {observed.graphs} graph(s)")
            continue
        if not records:
            problems.append(f"{where}: predicted a break, dynamo does not break there (false positive)")
            continue
        skipped = any(r["frame_skip"] for r in records)
        # An unresumable break before the first traced op makes dynamo skip the whole function,
        # which is what "the rest of the function runs eagerly" amounts to there; "may-skip"
        # (comprehensions) holds either way.
        if finding.effect not in ("rest-eager", "may-skip") and (finding.effect == "frame-skip") != skipped:
            said = "says" if finding.effect == "frame-skip" else "does not say"
            problems.append(f"{where}: the finding {said} dynamo skips the function; dynamo's log: {_reasons(records)}")
        for problem in _unlisted_ids(finding, findings, observed):
            problems.append(f"{where}: {problem}")
        rest = any(r["rest_eager"] for r in records)
        if finding.effect == "rest-eager" and not (rest or skipped):
            problems.append(f"{where}: claims the rest of the function runs eagerly; dynamo's log: {_reasons(records)}")
        elif rest and finding.effect not in ("rest-eager", "frame-skip"):
            problems.append(f"{where}: effect {finding.effect!r}, but dynamo cannot resume: {_reasons(records)}")
    for line in sorted(set(observed.lines) - covered):
        problems.append(f"line {line}: dynamo breaks here ({_reasons(observed.lines[line])}) but no finding covers it")
    return problems


def _if_compiled_disagreements(path: Path, source: str, findings: list[Finding]) -> list[str]:
    """The findings in functions nothing in the case compiles (`if_compiled`) against their
    `# expect if compiled:` markers, and against dynamo compiling those functions: the callables the
    case's `sample_if_compiled()` returns, which a case with such findings must have."""
    conditional = [f for f in findings if f.if_compiled]
    predicted = {(f.span.start_line, f.code) for f in conditional}
    expected = expected_findings(source, EXPECT_IF_COMPILED)
    problems = [f"line {line}: marked {code} if compiled, but the analyser does not report it so" for line, code in sorted(expected - predicted)]
    problems += [f"line {line}: the analyser reports {code} if compiled without a marker" for line, code in sorted(predicted - expected)]
    if not conditional:
        return problems
    if "def sample_if_compiled" not in source:
        return [*problems, "findings in uncompiled functions, but no sample_if_compiled() to confirm them with dynamo"]
    observed = run_dynamo(path, "sample_if_compiled")
    for finding in conditional:
        if not finding.latent and not any(finding.covers_line(line) for line in observed.lines):
            problems.append(f"line {finding.span.start_line} {finding.code}: predicted a break if compiled; compiled, dynamo does not break there")
    for line in sorted(observed.lines):
        if not any(f.covers_line(line) for f in findings):
            problems.append(f"line {line}: compiled by sample_if_compiled(), dynamo breaks here but no finding covers it")
    return problems


def _unlisted_ids(finding: Finding, findings: list[Finding], observed: Observed) -> list[str]:
    """Dynamo ids logged on the lines where `finding` is the innermost finding that the rule's
    table (analysis/rules/dynamo_ids.py, what the hover shows) does not list."""
    listed = set(gb_ids_for(finding.code)) | CONTEXT_IDS

    def size(f: Finding) -> tuple[int, int]:
        return (f.span.end_line - f.span.start_line, f.span.end_col - f.span.start_col)

    problems = []
    for line, records in observed.lines.items():
        if not finding.covers_line(line):
            continue
        if any(g is not finding and g.covers_line(line) and size(g) < size(finding) for g in findings):
            continue  # a nested finding's break
        for record in records:
            if record.get("gb_id") and record["gb_id"] not in listed:
                problems.append(f"dynamo logged {record['gb_id']} ({record['summary']}), which RULE_GB_IDS does not list for {finding.code}")
    return problems


def _reasons(records: list[dict[str, Any]]) -> str:
    parts = []
    for record in records:
        flags = " [frame skipped]" if record["frame_skip"] else " [rest eager]" if record["rest_eager"] else ""
        parts.append(record["summary"] + flags)
    return "; ".join(parts)


def findings_for(source: str) -> list[Finding]:
    return analyze(source, "<case>", strict=True)
