"""Every fixer fixture, original and fixed, on another device: does the fix hold there?

The test suite checks each fixture pair on CPU (the break gone, values kept, inductor compiles it).
Dynamo and inductor take other paths on CUDA (zamba's and jamba's flag fixes crashed inductor there
and not on CPU), so this runs each pair on the device named:

- the original and the fixed function eagerly on the fixture's inputs: same values;
- the fixed function under a counting backend: graphs and `graph_break` records;
- the fixed function under inductor: same values as eagerly, or the error it raised.
- with --time: the original and the fixed function under inductor on the first input that does
  not raise: the first call (compilation included, inductor's caches off) and the median of the
  steady calls after it, each timed to the device's end of work (`torch.cuda.synchronize`). The
  fixtures are tiny, so the steady time is launch and Python overhead: the cost a break adds (a
  fallback to eager Python, a device-to-host copy, a graph more to launch), not model speed-ups.
  Run it with --jobs 1: timings of processes sharing the device disturb each other.

Needs only torch (no libcst, no graphmend): the fixtures are already written.

    python3 bench/fixtures_device.py --device cuda [--jobs 8] [--only NAME...] [--time [--jobs 1]]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _callable(module: Any, device: str) -> Any:
    import torch

    fn = module.make() if hasattr(module, "make") else module.f
    # a compiled module: the module itself (compiling it runs its `__call__`), not its `forward`
    fn = fn._orig_mod if hasattr(fn, "_orig_mod") else getattr(fn, "_torchdynamo_orig_callable", fn)
    if isinstance(fn, torch.nn.Module):
        fn.to(device)
    return fn


def _to(value: Any, device: str) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _run(fn: Any, args: tuple) -> Any:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("value", fn(*args))
        except Exception as error:  # the check a Trap fix keeps must still raise
            return ("raised", type(error).__name__)


def _difference(a: Any, b: Any) -> str | None:
    """None when equal (tensors allclose at fp32 rounding), else what differs."""
    import torch

    if a[0] != b[0]:
        return f"{a[0]} {a[1] if a[0] == 'raised' else ''} vs {b[0]} {b[1] if b[0] == 'raised' else ''}"
    if a[0] == "raised":  # dynamo wraps an error met while tracing (TorchRuntimeError): still raised
        return None

    def walk(x: Any, y: Any) -> str | None:
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and len(x) == len(y):
            return next((d for d in (walk(p, q) for p, q in zip(x, y)) if d), None)
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"{x.dtype}{tuple(x.shape)} vs {y.dtype}{tuple(y.shape)}"
            if x.is_floating_point():
                ok = torch.allclose(x.float().cpu(), y.float().cpu(), rtol=1e-4, atol=1e-5, equal_nan=True)
            else:
                ok = torch.equal(x.cpu(), y.cpu())
            return None if ok else f"values differ (max {(x.float() - y.float()).abs().max().item():.3g})"
        return None if x == y else f"{x!r} vs {y!r}"

    return walk(a[1], b[1])


def _synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _timed(fn: Any, args: tuple, device: str, repeats: int) -> tuple[float, float]:
    """(first call in ms, median of `repeats` later calls in µs) of a freshly compiled `fn`."""
    import statistics
    import time

    import torch

    torch._dynamo.reset()
    compiled = torch.compile(fn)
    quiet = contextlib.redirect_stdout(io.StringIO())
    with quiet, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _synchronize(device)
        start = time.perf_counter()
        compiled(*args)
        _synchronize(device)
        first = (time.perf_counter() - start) * 1e3
        for _ in range(3):
            compiled(*args)
        steady = []
        for _ in range(repeats):
            _synchronize(device)
            start = time.perf_counter()
            compiled(*args)
            _synchronize(device)
            steady.append((time.perf_counter() - start) * 1e6)
    return first, statistics.median(steady)


def time_variant(before: Path, variant: str, device: str) -> dict:
    """Cold and steady inductor times of one side of a pair, in a process of its own (a second
    compilation in the same process reuses the first one's kernels: not a cold start). Timed on
    the first input that does not raise eagerly."""
    import torch

    path = before if variant == "original" else before.with_name(before.name.replace(".in.py", ".out.py"))
    module = _load(path, f"fixture_{variant}")
    inputs = [_to(args, device) for args in module.inputs()]
    torch.manual_seed(0)
    fn = _callable(module, device)
    usable = [args for number, args in enumerate(inputs) if (torch.manual_seed(number) is not None and _run(fn, args)[0] == "value")]
    if not usable:
        return {"time_error": "every input raises"}
    warm = torch.compile(lambda t: (t * 2).sum())  # load inductor and its compiler before the timed call
    warm(torch.ones(4, device=device))
    try:
        cold, steady = _timed(fn, usable[0], device, 50)
    except Exception as error:
        return {"time_error": f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}"}
    return {"cold_ms": round(cold), "steady_us": round(steady)}


def one(before: Path, device: str) -> dict:
    """In a fresh process (a fixture's flags are process-wide)."""
    import torch
    import torch._dynamo.testing
    from torch._dynamo.utils import counters

    after = before.with_name(before.name.replace(".in.py", ".out.py"))
    original, fixed = _load(before, "fixture_before"), _load(after, "fixture_after")
    inputs = [_to(args, device) for args in fixed.inputs()]
    torch.manual_seed(0)
    original_fn = _callable(original, device)
    torch.manual_seed(0)
    fixed_fn = _callable(fixed, device)
    row: dict = {"level": "unsafe" if getattr(fixed, "UNSAFE", False) else "costly" if getattr(fixed, "COSTLY", False) else "safe"}
    eager = []
    for number, args in enumerate(inputs):
        torch.manual_seed(number)
        a = _run(original_fn, args)
        torch.manual_seed(number)
        b = _run(fixed_fn, args)
        eager.append(b)
        if a[0] == "raised":  # a check the fixture means to trip, or code that creates CPU tensors
            row.setdefault("original_raises", []).append(f"#{number} {a[1]}")
        problem = _difference(a, b)
        if problem and row["level"] != "unsafe":
            row.setdefault("eager_changed", f"input #{number}: {problem}")
    counter = torch._dynamo.testing.CompileCounter()
    torch._dynamo.reset()
    counters.clear()
    counted = torch.compile(fixed_fn, backend=counter)
    for args in inputs:
        _run(counted, args)
    row["graphs"] = counter.frame_count
    row["breaks"] = sum(counters["graph_break"].values())
    torch._dynamo.reset()
    compiled = torch.compile(fixed_fn)
    for number, args in enumerate(inputs):
        torch.manual_seed(number)
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = ("value", compiled(*args))
        except Exception as error:
            got = ("raised", type(error).__name__)
            if eager[number][0] != "raised":
                row["inductor_error"] = f"input #{number}: {type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
                break
        problem = _difference(eager[number], got)
        if problem and not (row["level"] == "unsafe" and eager[number][0] == "raised"):
            row.setdefault("inductor_changed", f"input #{number}: {problem}")
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--only", nargs="*", help="fixture names (Fixer/name) to run")
    parser.add_argument("--time", action="store_true", help="also time original and fixed under inductor (cold, steady)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--time-variant", choices=("original", "fixed"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(time_variant(Path(args.one), args.time_variant, args.device) if args.time_variant else one(Path(args.one), args.device)))
        return 0
    pairs = sorted(FIXTURES.glob("*/*.in.py"))
    if args.only:
        pairs = [p for p in pairs if f"{p.parent.name}/{p.name[:-6]}" in args.only]

    def run_one(before: Path, *extra: str) -> dict:
        environment = None
        if extra:  # a timed run: cold caches
            environment = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp(prefix="gm-fixture-"), TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
        try:
            done = subprocess.run([sys.executable, __file__, "--one", str(before), "--device", args.device, *extra],
                                  capture_output=True, text=True, timeout=args.timeout, env=environment)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {args.timeout} s"}
        lines = done.stdout.strip().splitlines()
        return json.loads(lines[-1]) if done.returncode == 0 and lines else {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:160]}

    def measure(before: Path) -> tuple[str, dict]:
        row = run_one(before)
        if args.time and "error" not in row:
            sides = [run_one(before, "--time-variant", side) for side in ("original", "fixed")]
            failed = next((side.get("time_error") or side.get("error") for side in sides if "cold_ms" not in side), None)
            if failed:
                row["time_error"] = failed
            else:
                row["cold_ms"] = [side["cold_ms"] for side in sides]
                row["steady_us"] = [side["steady_us"] for side in sides]
        return f"{before.parent.name}/{before.name[:-6]}", row

    import torch

    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    print(f"torch {torch.__version__}, {where}: {len(pairs)} fixture pairs\n")
    timing = " first call ms, original / fixed | steady µs, original / fixed |" if args.time else ""
    print("| fixture | level | graphs | breaks | eager vs original | inductor |" + timing)
    print("|---|---|---|---|---|---|" + ("---|---|" if args.time else ""))
    bad = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for name, row in pool.map(measure, pairs):
            if "error" in row:
                bad += 1
                print(f"| {name} | | | | failed: {row['error']} | |", flush=True)
                continue
            eager = row.get("eager_changed", "same")
            inductor = row.get("inductor_error") or row.get("inductor_changed") or "same"
            if "original_raises" in row:
                eager += f" (original raises on input {', '.join(row['original_raises'])})"
            bad += eager != "same" or inductor != "same" or row["breaks"] > 0
            times = ""
            if args.time:
                times = f" {row['time_error']} | |" if "time_error" in row else " {} / {} | {} / {} |".format(*row["cold_ms"], *row["steady_us"])
            print(f"| {name} | {row['level']} | {row['graphs']} | {row['breaks']} | {eager} | {inductor} |{times}", flush=True)
    print(f"\n{bad} of {len(pairs)} pairs with a break, a changed value or an inductor failure on {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
