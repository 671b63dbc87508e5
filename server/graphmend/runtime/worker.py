"""Run TorchDynamo on a real call and record every graph break: the ground truth GraphMend checks
itself against, in the test suite and (as a script run with the user's interpreter) in editors.

This file must not import graphmend: it runs in the user's environment, which has their torch and
maybe no graphmend. Use it as a library (`capture(fn, args, kwargs)`) or as a script:

    python worker.py --target path/to/model.py:Net --sample path/to/model.py:make_sample

Why not `torch._dynamo.explain()`: it misses breaks before the first traced op, reports a skipped
function as -1 and does not say where a break that skips a frame happened. Instead the target is
compiled with a backend that counts FX graphs, and a handler on dynamo's `graph_breaks` loggers
records each break with its user stack (torch 2.13: see shared/taxonomy.md, section 4).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import logging
import os
import re
import sys
import time
import traceback
from typing import Any, Callable

_GRAPH_BREAK_LOGGERS = (
    "torch._dynamo.symbolic_convert.__graph_breaks",
    "torch._dynamo.convert_frame.__graph_breaks",
)
_HEADER = re.compile(r"Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (.+):(\d+)\s*$")
_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$')
_GB_ID = re.compile(r"gb(\d{4})\.html")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # a malformed record must not break the run
            self.messages.append(str(record.msg))


def parse_record(message: str) -> dict[str, Any] | None:
    """One `graph_breaks` log record -> {file, line, reason, gb_id, frame_skip, rest_eager, stack}."""
    lines = message.splitlines()
    if not lines:
        return None
    header = _HEADER.match(lines[0].strip())
    if header is None:
        return None
    reason_lines: list[str] = []
    stack: list[dict[str, Any]] = []
    section = "head"
    for line in lines[1:]:
        if line.startswith("Graph Break Reason:"):
            section = "reason"
            reason_lines.append(line[len("Graph Break Reason:") :].strip())
            continue
        if line.startswith("User code traceback:"):
            section = "stack"
            continue
        if section == "reason":
            reason_lines.append(line)
        elif section == "stack":
            frame = _FRAME.match(line)
            if frame:
                stack.append({"file": frame.group(1), "line": int(frame.group(2)), "function": frame.group(3).strip()})
    reason = "\n".join(reason_lines).strip()
    gb_ids = _GB_ID.findall(reason)
    lowered = reason.lower()
    return {
        "file": header.group(1),
        "line": int(header.group(2)),
        "reason": reason,
        "summary": _summary(reason),
        "gb_id": f"GB{gb_ids[-1]}" if gb_ids else None,
        "frame_skip": "skipping the function and falling back to eager" in lowered,
        "rest_eager": "skipping the rest of the function" in lowered,
        "duplicate": "user stack suppressed" in lines[0],
        "stack": stack,
    }


def _summary(reason: str) -> str:
    """The gb_type line: the first line that names the break (not dynamo's preamble)."""
    for line in reason.splitlines():
        text = line.strip()
        if not text or text.startswith(("Encountered graph break when attempting", "Failed to handle graph break")):
            continue
        if text.startswith("Graph break encountered:"):
            continue
        return text
    return reason.splitlines()[0].strip() if reason else ""


def locate(record: dict[str, Any], files: set[str]) -> tuple[str, int]:
    """The innermost frame of the break that lies in one of `files` (else the reported location)."""
    for frame in reversed(record["stack"]):
        if os.path.realpath(frame["file"]) in files:
            return frame["file"], frame["line"]
    return record["file"], record["line"]


def capture(fn: Callable[..., Any], args: tuple = (), kwargs: dict | None = None, *, backend_name: str = "counting") -> dict[str, Any]:
    """Compile `fn` with a graph-counting backend, call it once, and return what dynamo did."""
    import torch
    import torch._dynamo

    kwargs = kwargs or {}
    graphs: list[int] = []

    def counting_backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(len(gm.graph.nodes))
        return gm.forward

    handler = _Records()
    loggers = [logging.getLogger(name) for name in _GRAPH_BREAK_LOGGERS]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
    torch._dynamo.reset()
    error = None
    started = time.perf_counter()
    output = None
    try:
        # verbose: a break that repeats an earlier one keeps its user stack instead of being
        # logged as "user stack suppressed due to duplicate graph break", which has no location.
        with torch._dynamo.config.patch(verbose=True):
            compiled = torch.compile(fn, backend=counting_backend)
            output = compiled(*args, **kwargs)
    except Exception as exc:  # report, do not raise: the breaks recorded so far are still true
        error = f"{type(exc).__name__}: {exc}"
    finally:
        for lg, (level, propagate) in zip(loggers, saved):
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
        torch._dynamo.reset()
    breaks = [parsed for parsed in map(parse_record, handler.messages) if parsed is not None]
    return {
        "graphs": len(graphs),
        "ops_per_graph": graphs,
        "breaks": breaks,
        "error": error,
        "seconds": round(time.perf_counter() - started, 4),
        "output": output,
    }


# -- script mode ----------------------------------------------------------------------------------
def _load(spec: str) -> Any:
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit(f"expected path.py:Name, got {spec!r}")
    module_name = "graphmend_target_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_spec.loader.exec_module(module)
    target: Any = module
    for part in name.split("."):
        target = getattr(target, part)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record TorchDynamo graph breaks for one call, as JSON.")
    parser.add_argument("--sample", required=True, help="path.py:factory returning (callable, args, kwargs)")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"ok": False}
    stdout = io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout):
            factory = _load(args.sample)
            fn, fn_args, fn_kwargs = factory()
            captured = capture(fn, tuple(fn_args), dict(fn_kwargs or {}))
        captured.pop("output", None)
        import torch

        result = {"ok": True, "torch": torch.__version__, **captured, "stdout": stdout.getvalue()[-4000:]}
    except BaseException as exc:  # the caller needs JSON whatever happened
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-8000:]}
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
