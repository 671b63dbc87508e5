"""Everything a user can observe of one call: the output, printed text, log records, warnings
and the exception raised. The safe tier promises all of it stays the same (the order of output
relative to the graph's work aside), so the fixture tests compare whole observations, eagerly and
under torch.compile, and count the graph breaks dynamo makes over every input."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from graphmend.runtime.worker import _GRAPH_BREAK_LOGGERS, _Records, locate, parse_record

_TORCH_DIR = os.path.dirname(torch.__file__)


@dataclass
class Observation:
    output: Any = None
    stdout: str = ""
    logs: list[tuple[str, str, str]] = field(default_factory=list)  # (logger, level, message)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (category, message)
    error: tuple[str, str] | None = None  # (exception type, message)


class _LogRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        # the case's own loggers and the root logger; not torch's or its helpers' (filelock...)
        if record.name == "root" or record.name.startswith("graphmend_case_"):
            self.records.append((record.name, record.levelname, record.getMessage()))


def observe(fn: Callable[..., Any], args: tuple) -> Observation:
    """Call `fn(*args)` and record what it did (warnings under the "always" filter: every call counts)."""
    seen = Observation()
    handler = _LogRecords()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    stdout = io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                seen.output = fn(*args)
            except Exception as exc:  # the behaviour under test: which exception, which message
                # dynamo appends where it was tracing ("from user code: ..."), a debugging trailer
                # the same exception raised outside its tracing does not carry (run.py strips it too)
                seen.error = (type(exc).__name__, str(exc).split("\n\nfrom user code:")[0])
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    seen.stdout = stdout.getvalue()
    seen.logs = handler.records
    seen.warnings = [(w.category.__name__, str(w.message)) for w in caught if not w.filename.startswith(_TORCH_DIR)]
    return seen


_CASE_MODULE = re.compile(r"graphmend_case_\w+?_[0-9a-f]{8}")


_AUTOGRAD_SUFFIX = re.compile(r", (?:grad_fn=<\w+>|requires_grad=True)")


def differences(a: Observation, b: Observation, same_output: Callable[[Any, Any], list[str]], autograd_text: bool = True) -> list[str]:
    """What differs between two observations (the two versions of a case are imported under
    different module names: their loggers' names are compared without them). Without
    `autograd_text`, a printed tensor's `grad_fn=`/`requires_grad=` suffix is not compared: inside a
    graph compiled with AOTAutograd (inductor) an op sees tensors without autograd history, the
    one documented difference of the ordered-effect fix."""
    a, b = _anonymous(a, autograd_text), _anonymous(b, autograd_text)
    problems = []
    if a.error != b.error:
        problems.append(f"exception {a.error} vs {b.error}")
    elif a.error is None:
        problems += same_output(a.output, b.output)
    for what in ("stdout", "logs", "warnings"):
        if getattr(a, what) != getattr(b, what):
            problems.append(f"{what}: {getattr(a, what)!r} vs {getattr(b, what)!r}")
    return problems


def _anonymous(seen: Observation, autograd_text: bool = True) -> Observation:
    def text(value: str) -> str:
        return value if autograd_text else _AUTOGRAD_SUFFIX.sub("", value)

    logs = [(_CASE_MODULE.sub("<case>", name), level, text(message)) for name, level, message in seen.logs]
    warned = [(category, text(message)) for category, message in seen.warnings]
    return Observation(seen.output, text(seen.stdout), logs, warned, seen.error)


@dataclass
class CompiledRuns:
    observations: list[Observation]
    graphs: int
    break_sites: set[tuple[str, int]]  # (file, line) of every break dynamo logged, over all inputs


def run_compiled(
    fn: Callable[..., Any], inputs: list[tuple], case_file: str, backend: str = "counting", first_seed: int = 0, dynamic: bool | None = None
) -> CompiledRuns:
    """Compile `fn` once (a graph-counting backend, or a real one), call it on every input (input
    `i` after `torch.manual_seed(first_seed + i)`), and read the break sites from dynamo's
    graph_breaks log (never explain()'s count). `dynamic` is `torch.compile`'s: True traces sizes
    symbolically from the first call, as a recompile after a shape change does."""
    graphs: list[int] = []

    def counting_backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(len(gm.graph.nodes))
        return gm.forward

    records = _Records()
    loggers = [logging.getLogger(name) for name in _GRAPH_BREAK_LOGGERS]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(records)
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
    torch._dynamo.reset()
    observations = []
    try:
        # inductor draws random numbers with its own generator unless told to fall back to eager's
        with torch._dynamo.config.patch(verbose=True), torch._inductor.config.patch(fallback_random=True):
            compiled = torch.compile(fn, backend=counting_backend if backend == "counting" else backend, dynamic=dynamic)
            for number, args in enumerate(inputs):
                torch.manual_seed(first_seed + number)  # the same draws for every version and backend
                observations.append(observe(compiled, args))
    finally:
        for lg, (level, propagate) in zip(loggers, saved):
            lg.removeHandler(records)
            lg.setLevel(level)
            lg.propagate = propagate
        torch._dynamo.reset()
    files = {os.path.realpath(case_file)}
    sites = set()
    for message in records.messages:
        parsed = parse_record(message)
        if parsed is not None:
            sites.add(locate(parsed, files))
    return CompiledRuns(observations, len(graphs), sites)
