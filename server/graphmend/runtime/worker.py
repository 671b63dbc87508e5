"""Run TorchDynamo on a real call and record every graph break: the ground truth GraphMend checks
itself against, in the test suite and (as a script run with the user's interpreter) in editors.

This file must not import graphmend: it runs in the user's environment, which has their torch and
maybe no graphmend. Use it as a library (`capture(fn, args, kwargs)`) or as a script:

    python worker.py --sample path/to/model.py:make_sample [--target path/to/model.py:Net]
                     [--root DIR] [--device auto|cpu|cuda]

The factory returns `(callable, args, kwargs)`; when it takes a `device` parameter it is given the
device chosen (CUDA when available, unless `--device cpu`). The script prints one JSON object on
its last stdout line and exits 0 (ran), 3 (the target's module failed to import), 4 (the factory
raised), or 5 (the compiled call raised; the breaks recorded before are still reported).
Torch >= 2.4 (the `graph_breaks` logging artifact).

Why not `torch._dynamo.explain()`: it misses breaks before the first traced op, reports a skipped
function as -1 and does not say where a break that skips a frame happened. Instead the target is
compiled with a backend that counts FX graphs, and a handler on dynamo's `graph_breaks` loggers
records each break with its user stack (torch 2.13: see shared/taxonomy.md, section 4).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

_GRAPH_BREAK_LOGGERS = (
    "torch._dynamo.symbolic_convert.__graph_breaks",
    "torch._dynamo.convert_frame.__graph_breaks",
)
_HEADER = re.compile(r"Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (.+):(\d+)\s*$")
_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$')
_GB_ID = re.compile(r"gb(\d{4})\.html")
_SKIPPED = re.compile(r"frame skipped: (\S+) \((.+) line (\d+)\)")


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
    skipped = _SKIPPED.search(reason)
    return {
        "file": header.group(1),
        "line": int(header.group(2)),
        "reason": reason,
        "summary": _summary(reason),
        "gb_id": f"GB{gb_ids[-1]}" if gb_ids else None,
        "frame_skip": "skipping the function and falling back to eager" in lowered,
        "rest_eager": "skipping the rest of the function" in lowered,
        "duplicate": "user stack suppressed" in lines[0],
        "hints": _hints(reason),
        "explanation": _explanation(reason),
        "skipped_frame": (
            {"function": skipped.group(1), "file": skipped.group(2), "line": int(skipped.group(3))} if skipped else None
        ),
        "stack": stack,
    }


def _hints(reason: str) -> list[str]:
    """Dynamo's `Hint:` lines, without repeats (a frame skip repeats the first break's hints)."""
    hints: list[str] = []
    for line in reason.splitlines():
        text = line.strip()
        if text.startswith("Hint:"):
            hint = text[len("Hint:") :].strip()
            if hint and hint not in hints:
                hints.append(hint)
    return hints


def _explanation(reason: str) -> str:
    for line in reason.splitlines():
        text = line.strip()
        if text.startswith("Explanation:"):
            return text[len("Explanation:") :].strip()
    return ""


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
EXIT_OK, EXIT_IMPORT, EXIT_FACTORY, EXIT_CALL = 0, 3, 4, 5


class StageError(Exception):
    """A failure in one stage of a run (import, factory, call), with the exit code that names it."""

    def __init__(self, stage: str, code: int, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.stage = stage
        self.code = code
        self.trace = "".join(traceback.format_exception(type(cause), cause, cause.__traceback__))


def _module_name(path: str) -> tuple[str, str]:
    """(import root, dotted name) for a file: inside a package (directories with __init__.py) the
    name is dotted from the first directory above the package, so relative imports work."""
    path = os.path.abspath(path)
    directory, stem = os.path.split(os.path.splitext(path)[0])
    parts = [stem] if stem != "__init__" else []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return directory, ".".join(parts)


def _import_file(path: str) -> Any:
    import importlib

    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    root, name = _module_name(path)
    existing = sys.modules.get(name)
    if existing is not None and os.path.realpath(getattr(existing, "__file__", "") or "") == os.path.realpath(path):
        return existing
    if root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)  # the user's tree first, before anything else of the same name
    if existing is None and name:
        try:
            module = importlib.import_module(name)
        except ImportError:
            module = None  # e.g. a package-less name that clashes: load the file directly below
        if module is not None and os.path.realpath(getattr(module, "__file__", "") or "") == os.path.realpath(path):
            return module
    # a clash with another module of the same name: load this file under a name of its own
    unique = "graphmend_target_" + re.sub(r"\W", "_", os.path.splitext(os.path.abspath(path))[0])
    module_spec = importlib.util.spec_from_file_location(unique, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[unique] = module
    module_spec.loader.exec_module(module)
    return module


def _load(spec: str) -> Any:
    """`path.py:Name` (or `path.py:Class.attr`) -> the object, importing the file as a module."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ValueError(f"expected path.py:Name, got {spec!r}")
    target: Any = _import_file(path)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _uncompiled(fn: Any) -> Any:
    """The original callable when the factory hands back something already `torch.compile`d."""
    original = getattr(fn, "_orig_mod", None)  # OptimizedModule
    if original is not None:
        return original
    return getattr(fn, "_torchdynamo_orig_callable", fn)


def _call_factory(factory: Callable[..., Any], device: str) -> tuple[Any, tuple, dict]:
    import inspect

    try:
        accepts_device = "device" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        accepts_device = False
    produced = factory(device=device) if accepts_device else factory()
    if not isinstance(produced, (tuple, list)) or len(produced) not in (2, 3) or not callable(produced[0]):
        raise TypeError(f"the factory must return (callable, args, kwargs), got {type(produced).__name__}")
    fn, args = produced[0], produced[1]
    kwargs = produced[2] if len(produced) == 3 else {}
    return fn, tuple(args or ()), dict(kwargs or {})


def _device_of(fn: Any, args: tuple, kwargs: dict) -> str:
    """Where the work runs: the first tensor argument's device, else the module's parameters'."""
    import torch

    for value in [*args, *kwargs.values()]:
        if isinstance(value, torch.Tensor):
            return str(value.device)
    parameters = getattr(fn, "parameters", None)
    if callable(parameters):
        for parameter in parameters():
            return str(parameter.device)
    return "cpu"


def covered_lines(fn: Any, args: tuple, kwargs: dict, root: str) -> dict[str, list[int]]:
    """The lines of files under `root` that one eager call executes: a finding on a line the sample
    never ran is "not reached", not "dynamo disagrees". Runs after the compiled call, so the
    compiled call sees the state the factory made."""
    root = os.path.realpath(root) + os.sep
    lines: dict[str, set[int]] = {}
    here = os.path.realpath(__file__)
    traced: dict[str, bool] = {}  # per file name: the tracer sees every call, resolve each name once

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            lines.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        filename = frame.f_code.co_filename
        inside = traced.get(filename)
        if inside is None:
            real = os.path.realpath(filename)
            inside = traced[filename] = real.startswith(root) and real != here and "site-packages" not in real
        if inside:
            lines.setdefault(filename, set()).add(frame.f_lineno)
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args, **kwargs)
    finally:
        sys.settrace(previous)
    return {os.path.realpath(name): sorted(found) for name, found in lines.items()}


def _skipped_frames(breaks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for record in breaks:
        frame = record.get("skipped_frame")
        if frame is not None and frame not in frames:
            frames.append(frame)
    return frames


def run(sample: str, target: str | None = None, root: str | None = None, device: str = "auto") -> dict[str, Any]:
    """Import, build the sample, compile and call it once: the JSON-ready report (or a StageError)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    try:
        import torch

        factory = _load(sample)
        target_object = _load(target) if target else None
    except BaseException as exc:
        raise StageError("import", EXIT_IMPORT, exc) from exc
    timings["import_s"] = round(time.perf_counter() - started, 4)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    started = time.perf_counter()
    try:
        fn, args, kwargs = _call_factory(factory, device)
        fn = _uncompiled(fn)
    except BaseException as exc:
        raise StageError("factory", EXIT_FACTORY, exc) from exc
    timings["factory_s"] = round(time.perf_counter() - started, 4)
    warnings_: list[str] = []
    if target_object is not None and not _matches(fn, target_object):
        warnings_.append(f"the factory returned {type(fn).__name__}, not {target}")
    captured = capture(fn, args, kwargs)
    captured.pop("output", None)
    timings["first_call_s"] = captured.pop("seconds")
    used = _device_of(fn, args, kwargs)
    if used.startswith("cuda"):
        try:
            torch.cuda.synchronize()  # an asynchronous device error surfaces here
        except Exception as exc:
            captured["error"] = captured["error"] or f"{type(exc).__name__}: {exc}"
    coverage: dict[str, list[int]] = {}
    if captured["error"] is None and root:
        try:
            coverage = covered_lines(fn, args, kwargs, root)
        except BaseException as exc:
            warnings_.append(f"the eager call for coverage raised {type(exc).__name__}: {exc}")
    return {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": used,
        "gpu": torch.cuda.get_device_name(torch.device(used).index or 0) if used.startswith("cuda") else None,
        **captured,
        "skipped_frames": _skipped_frames(captured["breaks"]),
        "coverage": coverage,
        "timings": timings,
        "warnings": warnings_,
    }


def _matches(fn: Any, target: Any) -> bool:
    """Whether the callable the factory built is (an instance of, or a method of) the target."""
    if fn is target or getattr(fn, "__func__", None) is target:
        return True
    if isinstance(target, type):
        owner = getattr(fn, "__self__", fn)
        return isinstance(owner, target)
    return getattr(fn, "__wrapped__", None) is target


def _adopt_orphans() -> None:
    """Become a child subreaper (Linux): a process the sample starts and abandons is re-parented
    here instead of to init, so the runner still finds it below this worker and can stop it."""
    if sys.platform != "linux":
        return
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # without it, only the processes still below their parents are found


def main(argv: list[str] | None = None) -> int:
    _adopt_orphans()
    parser = argparse.ArgumentParser(description="Record TorchDynamo graph breaks for one call, as JSON.")
    parser.add_argument("--sample", required=True, help="path.py:factory returning (callable, args, kwargs)")
    parser.add_argument("--target", help="path.py:Name the sample is for (checked against what the factory returns)")
    parser.add_argument("--root", help="report the lines an eager call runs in files under this directory")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    args = parser.parse_args(argv)
    # run as `python worker.py`, this file's folder heads sys.path: drop it, or graphmend's own
    # runner.py/samples.py would shadow the user's modules of those names
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or ".") != here or entry == ""]
    sys.argv = [args.sample.rpartition(":")[0]]  # user code that parses arguments at import sees none
    stdout = io.StringIO()
    code = EXIT_OK
    try:
        with contextlib.redirect_stdout(stdout):
            result: dict[str, Any] = {"ok": True, **run(args.sample, args.target, args.root, args.device)}
        if result["error"] is not None:
            result["stage"] = "call"
            code = EXIT_CALL
    except StageError as exc:
        result = {"ok": False, "stage": exc.stage, "error": str(exc), "traceback": exc.trace[-8000:]}
        code = exc.code
    result["stdout"] = stdout.getvalue()[-4000:]
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    status = main()
    sys.stderr.flush()
    # no atexit handlers or leftover non-daemon threads of user code may print after the report
    # or keep the process (and its pipes) alive
    os._exit(status)
