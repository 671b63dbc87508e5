"""Held-out graph-break corpus: count the break sites of each case with real TorchDynamo, and measure
how many of them a meaning-preserving hand rewrite removes and how many `graphmend fix` (the default,
safe tier) removes without changing behaviour.

    .venv/bin/python bench/heldout/run.py [--inductor] [--json out.json] [-j N] [case ...]

Each case runs in its own subprocess (`--worker NAME`) with a timeout, so a case that hangs or
crashes costs only its own row. See README.md beside this file for what a case is and the rules.

Method, per case and per variant (original, hand rewrite, graphmend-fixed copy):
- Every variant is imported under the same module name (`heldout_<case>`), so
  `logging.getLogger(__name__)` names the same logger in all of them.
- Each variant is imported afresh for each run mode, and `make()` builds the callable once per
  variant and run mode; the inputs (`inputs()` plus
  `failing_inputs()`) are then called in order, so state a case keeps between calls (a
  `warning_once` cache, an EMA buffer) is compared along the same sequence of calls. Every call
  starts from the same RNG state (torch, random and numpy seeded).
- eager: plain calls.  compiled: before every call `torch._dynamo.reset()`, then a fresh
  `torch.compile(obj, backend=<counting backend>)` with a handler (DEBUG, propagate=False) on the
  loggers `torch._dynamo.symbolic_convert.__graph_breaks` and
  `torch._dynamo.convert_frame.__graph_breaks`, under `torch._dynamo.config.verbose=True` (so a
  repeated break keeps its user stack). Each record is parsed with graphmend's runtime worker
  (`parse_record`) and located at its innermost frame in the variant's own file (`locate`): a break
  inside `logging/__init__.py` reached from the case counts at the case's calling line. A *break
  site* is a distinct line of the variant's file at which dynamo reports a break while running the
  normal inputs (breaks seen only on `failing_inputs()`, i.e. on the path that raises, are listed as
  `error_path_sites` in the JSON and not counted); records with no frame in that file are reported as
  "elsewhere" and not counted. Resetting before every call keeps each input's trace independent (no
  automatic-dynamic recompiles, no recompile limit).
- Behaviour recorded per call: the output (tensors compared by dtype, shape and
  allclose(rtol=1e-5, atol=1e-6, equal_nan)), the gradients w.r.t. floating inputs and parameters
  when the case sets GRAD = True, the captured stdout, every log record of the case's loggers (and the
  root logger) as (logger name, level, getMessage()), every warning as (category, message) with the
  filter set to "always", the exception raised (type and message) if any, and the arguments after
  the call (in-place mutation). After the sequence: the module's state_dict. Warnings whose file
  lies inside the torch package (dynamo's own) are not compared.
- Sites removed, for the hand rewrite and for graphmend alike, are counted as
  max(0, sites(original) - sites(variant)): line numbers of a hand rewrite cannot be mapped back, and
  counting keeps the two measures comparable. For graphmend the JSON also lists, per original site,
  whether dynamo still breaks at the line the diff maps it to (`gm_site_map`). The fix summary's claim
  is compared with the sites gone on the normal inputs plus those gone on the path that raises
  (`gone_error_paths`): a print or check moved out of a "stopping training" branch is a break
  removed that the normal inputs never reach.
- A variant "behaves the same" when its eager run matches the original's eager run and its compiled
  run matches the original's compiled run. A graphmend-fixed file that does not is CHANGED and none
  of its removed sites count.
- --inductor: the hand rewrite is compiled with backend="inductor" (no reset between inputs) and run
  on every input, and compared with the original's eager run (tolerance rtol=1e-4, atol=1e-5:
  inductor reorders floating-point reductions; `torch._inductor.config.fallback_random = True` so
  random ops draw from eager's generator); the original and the graphmend-fixed file are compiled
  with inductor and run on the first input (ok/fail; an unchanged file reuses the original's result).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import copy
import dataclasses
import difflib
import importlib.util
import inspect
import io
import json
import logging
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# `--corpus DIR` (passed to the per-case workers through the environment) runs another corpus of
# the same layout, such as bench/working: the held-out corpus is the default.
CORPUS = Path(os.environ.get("GRAPHMEND_CORPUS", str(HERE))).resolve()
NAME_COMPILED = os.environ.get("GRAPHMEND_NAME_COMPILED") == "1"  # --name-compiled, seen by the workers
FIX_LEVEL = os.environ.get("GRAPHMEND_FIX_LEVEL", "safe")  # --fix-level, seen by the workers
CASES = CORPUS / "cases"
HAND = CORPUS / "hand"
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "server"))

GRAPH_BREAK_LOGGERS = (
    "torch._dynamo.symbolic_convert.__graph_breaks",
    "torch._dynamo.convert_frame.__graph_breaks",
)
RTOL, ATOL = 1e-5, 1e-6
INDUCTOR_RTOL, INDUCTOR_ATOL = 1e-4, 1e-5


# -- recording one call -------------------------------------------------------------------------
class _ListHandler(logging.Handler):
    def __init__(self, keep=None) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.keep = keep

    def emit(self, record: logging.LogRecord) -> None:
        if self.keep is None or self.keep(record.name):
            self.records.append(record)


def _seed() -> None:
    import numpy as np
    import torch

    torch.manual_seed(1234)
    random.seed(1234)
    np.random.seed(1234)


def _snapshot(value: Any) -> Any:
    """A detached copy of a call's output/arguments, for comparison after later calls ran."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, torch.Generator):
        return ("generator", value.get_state())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_snapshot(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value)
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("dataclass", type(value).__name__, {f.name: _snapshot(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if value is None or isinstance(value, (int, float, bool, str, complex)):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:
        return ("repr", repr(value))


def _clone_args(args: tuple, grad: bool) -> tuple:
    import torch

    def one(a: Any) -> Any:
        if isinstance(a, torch.Generator):
            g = torch.Generator(device=a.device)
            g.set_state(a.get_state())
            return g
        if isinstance(a, torch.Tensor):
            c = a.detach().clone()
            if grad and c.is_floating_point():
                c.requires_grad_(True)
            return c
        if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
            return type(a)(one(v) for v in a)
        if isinstance(a, dict):
            return {k: one(v) for k, v in a.items()}
        return copy.deepcopy(a)

    return tuple(one(a) for a in args)


def _flat_tensors(value: Any) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat_tensors(v)]
    return []


class Recorder:
    """Stdout, log records and warnings of one call."""

    def __init__(self, logger_prefix: str) -> None:
        self.prefix = logger_prefix

    def __enter__(self) -> Recorder:
        self.stdout = io.StringIO()
        self._redirect = contextlib.redirect_stdout(self.stdout)
        self._redirect.__enter__()
        self.handler = _ListHandler(lambda name: name == "root" or name == self.prefix or name.startswith(self.prefix + "."))
        root = logging.getLogger()
        self._root_level = root.level
        root.setLevel(logging.DEBUG)
        root.addHandler(self.handler)
        self._warn = warnings.catch_warnings(record=True)
        self.warnings = self._warn.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc: Any) -> None:
        self._warn.__exit__(None, None, None)
        root = logging.getLogger()
        root.removeHandler(self.handler)
        root.setLevel(self._root_level)
        self._redirect.__exit__(None, None, None)

    def result(self) -> dict:
        import torch

        torch_dir = os.path.dirname(torch.__file__) + os.sep
        return {
            "stdout": self.stdout.getvalue(),
            "logs": [(r.name, r.levelname, _message(r)) for r in self.handler.records],
            "warnings": [
                (w.category.__name__, str(w.message))
                for w in self.warnings
                if not os.path.abspath(w.filename).startswith(torch_dir)
            ],
        }


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception as exc:
        return f"<unformattable: {exc}>"


class BreakLog:
    """Graph-break records of dynamo, located in `files`."""

    def __init__(self) -> None:
        self.handler = _ListHandler()

    def __enter__(self) -> BreakLog:
        self.loggers = [logging.getLogger(n) for n in GRAPH_BREAK_LOGGERS]
        self.saved = [(lg.level, lg.propagate) for lg in self.loggers]
        for lg in self.loggers:
            lg.addHandler(self.handler)
            lg.setLevel(logging.DEBUG)
            lg.propagate = False
        return self

    def __exit__(self, *exc: Any) -> None:
        for lg, (level, propagate) in zip(self.loggers, self.saved):
            lg.removeHandler(self.handler)
            lg.setLevel(level)
            lg.propagate = propagate

    def sites(self, file: str) -> tuple[dict[int, str], list[str]]:
        from graphmend.runtime.worker import locate, parse_record

        real = os.path.realpath(file)
        lines: dict[int, str] = {}
        elsewhere: list[str] = []
        for record in self.handler.records:
            parsed = parse_record(_message(record))
            if parsed is None:
                continue
            where, line = locate(parsed, {real})
            if os.path.realpath(where) == real:
                flag = " [frame skipped]" if parsed["frame_skip"] else " [rest eager]" if parsed["rest_eager"] else ""
                lines.setdefault(line, parsed["summary"] + flag)
            elif not parsed["duplicate"]:
                elsewhere.append(f"{where}:{line}: {parsed['summary']}")
        return lines, elsewhere


def run_variant(module: Any, file: str, calls: list[tuple[tuple, bool]], mode: str, grad: bool, prefix: str) -> dict:
    """Call the variant's make() object on every input in `mode` (eager | counting | inductor)."""
    import torch
    import torch._dynamo

    obj = module.make()
    records: list[dict] = []
    sites: dict[int, str] = {}
    fail_sites: dict[int, str] = {}  # breaks seen only while running failing_inputs (error paths)
    elsewhere: list[str] = []
    graphs = 0
    compiled_once = None
    if mode == "inductor":
        import torch._inductor.config as inductor_config

        # eager's RNG in compiled code too, so random ops compare with the eager run
        inductor_config.fallback_random = True
        torch._dynamo.reset()
        compiled_once = torch.compile(obj, backend="inductor")
    for args, expect_fail in calls:
        call_args = _clone_args(args, grad and not expect_fail)
        _seed()
        out, exc, grads = None, None, None
        gm_count: list[int] = []

        def counting(gm: Any, example_inputs: Any, gm_count: list[int] = gm_count) -> Any:
            gm_count.append(len(gm.graph.nodes))
            return gm.forward

        with Recorder(prefix) as rec:
            try:
                if mode == "eager":
                    out = obj(*call_args)
                elif mode == "counting":
                    torch._dynamo.reset()
                    with BreakLog() as blog, torch._dynamo.config.patch(verbose=True):
                        try:
                            out = torch.compile(obj, backend=counting)(*call_args)
                        finally:
                            found, other = blog.sites(file)
                            for line, summary in found.items():
                                (fail_sites if expect_fail else sites).setdefault(line, summary)
                            elsewhere.extend(o for o in other if o not in elsewhere)
                            graphs += len(gm_count)
                else:
                    out = compiled_once(*call_args)
                if grad and not expect_fail:
                    grads = _backward(obj, call_args, out)
            except KeyboardInterrupt:
                raise
            except BaseException as e:
                exc = (type(e).__name__, _exc_text(e, file))
        record = rec.result()
        record.update(out=_snapshot(out), exc=exc, grads=grads, args_after=_snapshot(call_args), expect_fail=expect_fail)
        records.append(record)
    state = None
    if isinstance(obj, torch.nn.Module):
        state = {k: v.detach().clone() for k, v in obj.state_dict().items()}
    if mode == "counting":
        torch._dynamo.reset()
    fail_sites = {k: v for k, v in fail_sites.items() if k not in sites}
    return {"records": records, "state": state, "sites": sites, "fail_sites": fail_sites, "elsewhere": elsewhere, "graphs": graphs}


def _exc_text(e: BaseException, file: str) -> str:
    """The exception's message, minus what differs between two copies of the same code: dynamo's
    "from user code:" trailer (file paths and lines), object addresses, the variant's own path."""
    import re

    text = str(e).split("\n\nfrom user code:")[0]
    text = text.replace(file, "<file>")
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text)


def _backward(obj: Any, args: tuple, out: Any) -> Any:
    import torch

    leaves = [t for t in _flat_tensors(args) if t.requires_grad]
    params = list(obj.named_parameters()) if isinstance(obj, torch.nn.Module) else []
    outs = [t for t in _flat_tensors(out) if t.is_floating_point() and t.requires_grad]
    if not outs:
        return None
    total = sum(o.sum() for o in outs)
    total.backward()
    grads = [None if t.grad is None else t.grad.detach().clone() for t in leaves]
    pgrads = {n: (None if p.grad is None else p.grad.detach().clone()) for n, p in params}
    for _, p in params:
        p.grad = None
    return {"inputs": grads, "params": pgrads}


# -- comparison ---------------------------------------------------------------------------------
def same(a: Any, b: Any, path: str, rtol: float = RTOL, atol: float = ATOL) -> list[str]:
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{path}: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}"]
        if a.dtype == torch.bool or not (a.is_floating_point() or a.is_complex()):
            return [] if torch.equal(a, b) else [f"{path}: values differ"]
        if not torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol, equal_nan=True):
            diff = (a.double() - b.double()).abs().nan_to_num(0).max().item() if a.numel() else 0
            return [f"{path}: values differ (max abs diff {diff:.3g})"]
        return []
    # by name: each variant is imported afresh, so its classes (a NamedTuple, a dataclass) are
    # distinct objects with the same name
    if type(a).__qualname__ != type(b).__qualname__:
        return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
    if isinstance(a, float):
        if math.isnan(a) and math.isnan(b):
            return []
        return [] if math.isclose(a, b, rel_tol=rtol, abs_tol=atol) else [f"{path}: {a!r} vs {b!r}"]
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} vs {len(b)}"]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in same(x, y, f"{path}[{i}]", rtol, atol)]
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return [f"{path}: keys {list(a.keys())} vs {list(b.keys())}"]
        return [p for k in a for p in same(a[k], b[k], f"{path}[{k!r}]", rtol, atol)]
    try:
        equal = a == b
        if not isinstance(equal, bool):
            equal = bool(equal)
    except Exception:
        equal = repr(a) == repr(b)
    return [] if equal else [f"{path}: {a!r} vs {b!r}"]


def compare(ref: dict, other: dict, rtol: float = RTOL, atol: float = ATOL) -> list[str]:
    """Every difference in observable behaviour between two runs of the same call sequence."""
    return [p if len(p) <= 400 else p[:397] + "..." for p in _compare(ref, other, rtol, atol)]


def _compare(ref: dict, other: dict, rtol: float, atol: float) -> list[str]:
    problems: list[str] = []
    for i, (a, b) in enumerate(zip(ref["records"], other["records"])):
        where = f"call {i}"
        if a["exc"] != b["exc"]:
            problems.append(f"{where}: exception {a['exc']} vs {b['exc']}")
            continue
        if a["exc"] is None:
            problems += same(a["out"], b["out"], f"{where} output", rtol, atol)
            problems += same(a["grads"], b["grads"], f"{where} grads", rtol, atol)
        problems += same(a["args_after"], b["args_after"], f"{where} args after the call", rtol, atol)
        for key in ("stdout", "logs", "warnings"):
            if a[key] != b[key]:
                problems.append(f"{where}: {key} {_short(a[key])} vs {_short(b[key])}")
    if len(ref["records"]) != len(other["records"]):
        problems.append("different number of calls")
    if (ref["state"] is None) != (other["state"] is None):
        problems.append("module state: one variant is an nn.Module, the other is not")
    elif ref["state"] is not None:
        problems += same(ref["state"], other["state"], "state_dict", rtol, atol)
    return problems


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:197] + "..."


# -- one case (worker process) ------------------------------------------------------------------
def _import(path: Path, name: str) -> Any:
    # Dynamo keeps a reference to a module it imports while tracing as `__import_<name>` in the
    # globals of the frame it compiled (torch's own, when the case's function is wrapped by
    # `torch.no_grad()`); a variant imported later under the same name would be guarded against
    # the earlier module's attributes (dynamo also caches the import itself). A fresh process has
    # neither: drop both.
    symbolic_convert = sys.modules.get("torch._dynamo.symbolic_convert")
    cached_import = getattr(symbolic_convert, "_import_module", None)
    if hasattr(cached_import, "cache_clear"):
        cached_import.cache_clear()
    alias = "__import_" + name.replace(".", "_dot_")
    for loaded in list(sys.modules.values()):
        namespace = getattr(loaded, "__dict__", None)
        if isinstance(namespace, dict) and alias in namespace:
            del namespace[alias]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def _calls(module: Any) -> list[tuple[tuple, bool]]:
    import torch

    torch.manual_seed(0)
    normal = [(tuple(a), False) for a in module.inputs()]
    torch.manual_seed(0)
    failing = [(tuple(a), True) for a in module.failing_inputs()] if hasattr(module, "failing_inputs") else []
    return normal + failing


def compiled_entry(obj: Any, path: Path) -> str | None:
    """`case.py:Name` for what `make()` returns, as a user names it in `[tool.graphmend] compiled`:
    a function, `Class.method` for a bound method, the class of a module (its forward)."""
    function = getattr(obj, "__func__", obj)
    if inspect.isfunction(function) and "<lambda>" not in function.__qualname__:
        return f"{path.name}:{function.__qualname__}"  # `make.<locals>.step` for a closure, as Python names it
    cls = type(obj)
    if cls.__module__ == "builtins" or "<" in cls.__qualname__:
        return None  # a lambda, a builtin: nothing a user could name
    return f"{path.name}:{cls.__qualname__}"


def graphmend_fix(path: Path, workdir: Path, entry: str | None = None) -> tuple[Path, str | None, int | None]:
    """A copy of the case fixed by `graphmend fix` at FIX_LEVEL (default: the safe tier), and the
    number of breaks its summary claims fixed. With `entry`, the configuration names it as
    compiled, as a user whose `torch.compile` call lives elsewhere does."""
    target = workdir / path.name
    shutil.copyfile(path, target)
    if entry is not None:
        (workdir / "pyproject.toml").write_text(f'[tool.graphmend]\ncompiled = ["{entry}"]\n', encoding="utf-8")
    script = Path(sys.executable).with_name("graphmend")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "graphmend"]
    done = subprocess.run(
        [*command, "fix", str(target), "--exit-zero", "--quiet", "--fix-level", FIX_LEVEL], capture_output=True, text=True, timeout=300, cwd=workdir
    )
    if done.returncode != 0:
        return target, f"graphmend fix exited {done.returncode}: {(done.stderr or done.stdout)[-500:]}", None
    claimed = re.search(r"^Fixed (\d+) graph break", done.stdout, re.MULTILINE)
    return target, None, int(claimed.group(1)) if claimed else None


def _line_map(before: str, after: str) -> dict[int, tuple[int, int]]:
    """Original line -> (first, last) line of the fixed file it became (a replaced block maps to
    the whole replacement)."""
    a, b = before.splitlines(), after.splitlines()
    mapping: dict[int, tuple[int, int]] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for i in range(i1, i2):
            if tag == "equal":
                mapping[i + 1] = (j1 + (i - i1) + 1, j1 + (i - i1) + 1)
            elif tag == "replace":
                mapping[i + 1] = (j1 + 1, max(j1 + 1, j2))
            else:  # deleted
                mapping[i + 1] = (j1 + 1, j1)
    return mapping


def _run_worker(name: str, inductor: bool) -> dict:
    import torch._dynamo.config as dynamo_config

    case_path = CASES / f"{name}.py"
    hand_path = HAND / f"{name}.py"
    modname = f"heldout_{name}"
    result: dict[str, Any] = {"case": name, "errors": []}
    snapshot = dynamo_config.get_config_copy()

    def restore() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dynamo_config.load_config(snapshot)

    def variant(path: Path, modes: tuple[str, ...], calls: list | None = None) -> tuple[Any, dict]:
        # a fresh import per mode: module-level state (a warning_once cache, a counter) starts
        # from scratch in every run
        runs = {}
        module = None
        for mode in modes:
            module = _import(path, modname)
            try:
                todo = calls if calls is not None else _calls(module)
                runs[mode] = run_variant(module, str(path), todo, mode, bool(getattr(module, "GRAD", False)), modname)
            finally:
                restore()
        return module, runs

    started = time.perf_counter()
    original, orig_runs = variant(case_path, ("eager", "counting"))
    calls = _calls(original)
    result["inputs"] = sum(1 for _, fail in calls if not fail)
    result["failing_inputs"] = sum(1 for _, fail in calls if fail)
    result["grad"] = bool(getattr(original, "GRAD", False))
    result["kind"] = getattr(original, "KIND", "")
    result["sites"] = {str(k): v for k, v in sorted(orig_runs["counting"]["sites"].items())}
    result["error_path_sites"] = {str(k): v for k, v in sorted(orig_runs["counting"]["fail_sites"].items())}
    result["elsewhere"] = orig_runs["counting"]["elsewhere"]
    result["graphs"] = orig_runs["counting"]["graphs"]
    n_sites = len(orig_runs["counting"]["sites"])
    # sanity: inputs marked failing must raise in eager, the others must not
    for i, (rec, (_, fail)) in enumerate(zip(orig_runs["eager"]["records"], calls)):
        if fail and rec["exc"] is None:
            result["errors"].append(f"failing input {i} does not raise in eager")
        if not fail and rec["exc"] is not None:
            result["errors"].append(f"input {i} raises in eager: {rec['exc']}")
    dyn = compare(orig_runs["eager"], orig_runs["counting"])
    result["original_compiled_matches_eager"] = not dyn
    if dyn:
        result["original_compiled_differences"] = dyn[:5]

    # hand rewrite
    result["hand"] = None
    if hand_path.exists():
        _, hand_runs = variant(hand_path, ("eager", "counting"), calls)
        diffs = compare(orig_runs["eager"], hand_runs["eager"]) + compare(orig_runs["counting"], hand_runs["counting"])
        hand_sites = len(hand_runs["counting"]["sites"])
        result["hand"] = {
            "sites": {str(k): v for k, v in sorted(hand_runs["counting"]["sites"].items())},
            "same": not diffs,
            "differences": diffs[:8],
            "removed": max(0, n_sites - hand_sites) if not diffs else 0,
        }
        if inductor:
            try:
                _, ind = variant(hand_path, ("inductor",), calls)
                d = compare(orig_runs["eager"], ind["inductor"], INDUCTOR_RTOL, INDUCTOR_ATOL)
                result["hand"]["inductor"] = "ok" if not d else "differs"
                if d:
                    result["hand"]["inductor_differences"] = d[:5]
            except Exception as exc:
                result["hand"]["inductor"] = f"fail: {type(exc).__name__}: {str(exc)[:300]}"

    # graphmend fix
    timings = {"original_and_hand_s": round(time.perf_counter() - started, 1)}
    with tempfile.TemporaryDirectory(prefix="heldout_fix_") as tmp:
        fix_started = time.perf_counter()
        entry = compiled_entry(original.make(), case_path) if NAME_COMPILED else None
        fixed_path, error, claimed = graphmend_fix(case_path, Path(tmp), entry)
        result["compiled_entry"] = entry
        timings["graphmend_fix_s"] = round(time.perf_counter() - fix_started, 1)
        gm: dict[str, Any] = {"error": error, "claimed": claimed}
        result["graphmend"] = gm
        before = case_path.read_text()
        after = fixed_path.read_text()
        gm["changed_source"] = before != after
        gm["diff_lines"] = sum(1 for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="") if line[:1] in "+-" and line[:3] not in ("+++", "---"))
        if error is None and not gm["changed_source"]:
            gm.update(sites=result["sites"], same=True, differences=[], removed=0, gone=0, gone_error_paths=0, site_map={})
        elif error is None:
            try:
                _, fixed_runs = variant(fixed_path, ("eager", "counting"), calls)
                diffs = compare(orig_runs["eager"], fixed_runs["eager"]) + compare(orig_runs["counting"], fixed_runs["counting"])
                fixed_sites = fixed_runs["counting"]["sites"]
                mapping = _line_map(before, after)
                site_map = {}
                for line in orig_runs["counting"]["sites"]:
                    lo, hi = mapping.get(line, (line, line))
                    site_map[str(line)] = "still breaks" if any(lo <= s <= hi for s in fixed_sites) else "gone"
                # an unsafe fix may, by its title, skip output or a check under compile: those are
                # behaviour; values are outputs, gradients, arguments and state where both ran
                value_diffs = [d for d in diffs if not any(f": {key} " in d for key in ("stdout", "logs", "warnings", "exception"))]
                gm.update(
                    sites={str(k): v for k, v in sorted(fixed_sites.items())},
                    same=not diffs,
                    values_same=not value_diffs,
                    differences=diffs[:8],
                    removed=max(0, n_sites - len(fixed_sites)) if not diffs else 0,
                    gone=max(0, n_sites - len(fixed_sites)),  # what dynamo no longer reports, whatever else changed
                    # and on the path that raises: a fix summary also counts the prints and checks
                    # it moved there (a loss's "stopping training" branch)
                    gone_error_paths=max(0, len(result["error_path_sites"]) - len(fixed_runs["counting"]["fail_sites"])),
                    site_map=site_map,
                )
            except Exception as exc:
                gm.update(error=f"fixed file failed to run: {type(exc).__name__}: {exc}", same=False, removed=0)
        if inductor:
            first = [c for c in calls if not c[1]][:1]
            result["original_inductor"] = _inductor_first(variant, case_path, first)
            if gm.get("changed_source"):
                gm["inductor"] = _inductor_first(variant, fixed_path, first)
            else:
                gm["inductor"] = result["original_inductor"]
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["timings"] = timings
    return result


def _inductor_first(variant: Any, path: Path, first: list) -> str:
    """ok, or why compiling `path` with inductor and running it on the first input failed."""
    try:
        _, ind = variant(path, ("inductor",), first)
        rec = ind["inductor"]["records"][0]
        return "ok" if rec["exc"] is None else f"fail: {rec['exc'][0]}: {rec['exc'][1][:300]}"
    except Exception as exc:
        return f"fail: {type(exc).__name__}: {str(exc)[:300]}"


def worker_main(name: str, inductor: bool) -> int:
    logging.getLogger("torch").setLevel(logging.ERROR)
    try:
        result = _run_worker(name, inductor)
    except BaseException as exc:
        result = {"case": name, "crash": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
    sys.stdout.write("\n@@RESULT@@" + json.dumps(result, default=str) + "\n")
    sys.stdout.flush()
    return 0


# -- driver -------------------------------------------------------------------------------------
def run_case(name: str, inductor: bool, timeout: int) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name] + (["--inductor"] if inductor else [])
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    # a session of its own, so that a timeout stops the worker's children too (its `graphmend fix`
    # went on for minutes, orphaned, after the worker was killed)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True) as worker:
        try:
            stdout, stderr = worker.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.communicate()
            return {"case": name, "crash": f"timed out after {timeout}s"}
    for line in reversed(stdout.splitlines()):
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    return {"case": name, "crash": f"exit {worker.returncode}: {(stderr or stdout)[-1500:]}"}


def _row(r: dict, inductor: bool) -> str:
    if "crash" in r:
        return f"{r['case']:<34} CRASH {r['crash'][:150]}"
    hand = r.get("hand")
    gm = r.get("graphmend", {})
    n = len(r["sites"])
    hand_col = "-" if hand is None else (f"{hand['removed']}" if hand["same"] else "DIFFERS")
    if gm.get("error"):
        gm_col, same_col = "err", "err"
    else:
        gm_col = str(gm.get("removed", 0))
        same_col = "same" if gm.get("same") else "CHANGED"
        if not gm.get("changed_source"):
            same_col = "unchanged"
    flags = []
    if n == 0:
        flags.append("NO BREAK")
    if r.get("errors"):
        flags.append("; ".join(r["errors"]))
    if not r.get("original_compiled_matches_eager", True):
        flags.append("dynamo differs from eager")
    if hand is not None and hand["same"] and hand["removed"] == 0:
        flags.append("hand removes nothing")
    cols = f"{r['case']:<34} {r.get('kind', ''):<14} {n:>5} {hand_col:>7} {gm_col:>5} {same_col:>10}"
    if inductor:
        oi = "ok" if str(r.get("original_inductor", "")).startswith("ok") else "FAIL"
        hi = "-" if hand is None else ("ok" if hand.get("inductor") == "ok" else "FAIL")
        gi = "ok" if str(gm.get("inductor", "")).startswith("ok") else "FAIL"
        cols += f" {oi:>8} {hi:>8} {gi:>6}"
    return cols + ("  " + " | ".join(flags) if flags else "")


def summarize(results: list[dict]) -> dict:
    ok = [r for r in results if "crash" not in r]
    total = sum(len(r["sites"]) for r in ok)
    hand = sum(r["hand"]["removed"] for r in ok if r.get("hand"))
    gm = sum(r["graphmend"].get("removed", 0) for r in ok if r["graphmend"].get("same"))
    changed = [r["case"] for r in ok if r["graphmend"].get("changed_source") and not r["graphmend"].get("same")]
    return {
        "cases": len(results),
        "crashed": [r["case"] for r in results if "crash" in r],
        "break_sites": total,
        "hand_cases": sum(1 for r in ok if r.get("hand")),
        "hand_removed": hand,
        "graphmend_removed": gm,
        "graphmend_over_hand": (gm / hand) if hand else None,
        "graphmend_changed_behaviour": changed,
        "fix_level": FIX_LEVEL,
        "graphmend_claimed": sum(r["graphmend"].get("claimed") or 0 for r in ok),
        "graphmend_gone": sum(r["graphmend"].get("gone", 0) for r in ok),
        "graphmend_changed_values": [
            r["case"] for r in ok if r["graphmend"].get("changed_source") and r["graphmend"].get("values_same") is False
        ],
        "graphmend_gone_error_paths": sum(r["graphmend"].get("gone_error_paths", 0) for r in ok),
        "claimed_more_than_gone": [
            r["case"] for r in ok
            if (r["graphmend"].get("claimed") or 0) > r["graphmend"].get("gone", 0) + r["graphmend"].get("gone_error_paths", 0)
        ],
        "graphmend_touched": sum(1 for r in ok if r["graphmend"].get("changed_source")),
        "hand_differs": [r["case"] for r in ok if r.get("hand") and not r["hand"]["same"]],
        "no_break": [r["case"] for r in ok if not r["sites"]],
        "hand_inductor_fail": [r["case"] for r in ok if r.get("hand") and "inductor" in r["hand"] and r["hand"]["inductor"] != "ok"],
        "original_inductor_fail": [r["case"] for r in ok if "original_inductor" in r and not str(r["original_inductor"]).startswith("ok")],
        "graphmend_inductor_regressions": [
            r["case"]
            for r in ok
            if "inductor" in r["graphmend"]
            and not str(r["graphmend"]["inductor"]).startswith("ok")
            and str(r.get("original_inductor", "")).startswith("ok")
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all in cases/)")
    parser.add_argument("--inductor", action="store_true", help="also run the hand rewrite (all inputs) and the fixed file (first input) under inductor")
    parser.add_argument("--json", help="write the full results here")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="cases run in parallel (default 1)")
    parser.add_argument("--timeout", type=int, default=0, help="seconds per case (default 240, 900 with --inductor)")
    parser.add_argument(
        "--name-compiled",
        action="store_true",
        help="tell graphmend what make() returns is compiled ([tool.graphmend] compiled), as a user whose torch.compile call is elsewhere does",
    )
    parser.add_argument("--corpus", help="a folder with cases/ and hand/ of the same layout (default: this folder)")
    parser.add_argument(
        "--fix-level", choices=("safe", "costly", "unsafe"), default="safe",
        help="the `graphmend fix --fix-level` to measure (behaviour is compared as for safe; `claimed` vs `gone` counts the summary's honesty)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.name_compiled:
        os.environ["GRAPHMEND_NAME_COMPILED"] = "1"
    if args.corpus:
        os.environ["GRAPHMEND_CORPUS"] = str(Path(args.corpus).resolve())
        global CORPUS, CASES, HAND
        CORPUS = Path(args.corpus).resolve()
        CASES, HAND = CORPUS / "cases", CORPUS / "hand"
    if args.worker:  # the level comes from the parent's environment (FIX_LEVEL)
        return worker_main(args.worker, args.inductor)
    os.environ["GRAPHMEND_FIX_LEVEL"] = args.fix_level
    global FIX_LEVEL
    FIX_LEVEL = args.fix_level
    names = args.cases or sorted(p.stem for p in CASES.glob("*.py") if not p.name.startswith("_"))
    missing = [n for n in names if not (CASES / f"{n}.py").exists()]
    if missing:
        parser.error(f"no such case: {', '.join(missing)}")
    timeout = args.timeout or (900 if args.inductor else 240)
    started = time.perf_counter()
    header = f"{'case':<34} {'kind':<14} {'sites':>5} {'hand-':>7} {'gm-':>5} {'gm-behav':>10}"
    if args.inductor:
        header += f" {'orig-ind':>8} {'hand-ind':>8} {'gm-ind':>6}"
    print(header)
    print("-" * len(header))
    results: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_case, n, args.inductor, timeout): n for n in names}
        for future in concurrent.futures.as_completed(futures):
            r = future.result()
            results[r["case"]] = r
            print(_row(r, args.inductor), flush=True)
    ordered = [results[n] for n in names]
    summary = summarize(ordered)
    ratio = "n/a" if summary["graphmend_over_hand"] is None else f"{summary['graphmend_over_hand']:.1%}"
    print()
    print(
        f"SUMMARY: {summary['cases']} cases, {summary['break_sites']} break sites; "
        f"hand rewrites ({summary['hand_cases']} cases) remove {summary['hand_removed']}; "
        f"graphmend fix --fix-level {summary['fix_level']} removes {summary['graphmend_removed']} with the same behaviour "
        f"(touched {summary['graphmend_touched']} files; its summaries claim {summary['graphmend_claimed']}, dynamo sees "
        f"{summary['graphmend_gone']} gone, {summary['graphmend_gone_error_paths']} more on the paths that raise); "
        f"graphmend/hand = {ratio}; graphmend changed behaviour in {len(summary['graphmend_changed_behaviour'])} case(s)"
        + (f": {', '.join(summary['graphmend_changed_behaviour'])}" if summary["graphmend_changed_behaviour"] else "")
    )
    labels = (
        ("crashed", "crashed"),
        ("no_break", "do not break"),
        ("hand_differs", "hand rewrite differs"),
        ("hand_inductor_fail", "hand rewrite fails or differs under inductor"),
        ("original_inductor_fail", "original fails under inductor (first input)"),
        ("graphmend_inductor_regressions", "graphmend-fixed file fails under inductor where the original does not"),
        ("claimed_more_than_gone", "the fix summary claims more than dynamo sees gone"),
        ("graphmend_changed_values", "graphmend changed values (outputs, gradients, arguments or state)"),
    )
    for key, label in labels:
        if summary[key]:
            print(f"  {label}: {', '.join(summary[key])}")
    print(f"  ({time.perf_counter() - started:.0f}s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "cases": ordered}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
