"""How fast is the analyser? Prints numbers; asserts nothing (speed is measured, not tested).

    .venv/bin/python bench/analyze_speed.py [--repeat 30] [--files N]

1. Median time of `analyze()` on ~3,000-line model files (the keystroke budget is 30 ms): the
   transformers modeling files closest to 3,000 lines when transformers is installed, else a
   synthetic file built from examples/tiny_transformer.py. `ast.parse` alone is shown beside it,
   because it is the floor no analyser on `ast` can go below.
2. Pathological shapes a user can type (issue 18): an `if` whose test has N tensor operands
   (one finding each), a sum of N terms. Analysis and planning every fix (what quick fixes and
   `check`'s fixable marks need) should grow linearly with N.
3. Throughput over every modeling_*.py of the installed transformers: files/s in one process, and
   the wall time of `graphmend check --jobs 2` over the whole models/ tree.
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend import analyze  # noqa: E402
from graphmend.rewrite.engine import plan_fixes  # noqa: E402


def transformers_models() -> Path | None:
    try:
        import transformers
    except ImportError:
        return None
    return Path(transformers.__file__).parent / "models"


def median_ms(function, repeat: int) -> float:  # type: ignore[no-untyped-def]
    function()  # warm-up
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def parse_only(source: str) -> None:
    gc.disable()
    try:
        ast.parse(source)
    finally:
        gc.enable()


def synthetic_file(lines: int = 3000) -> str:
    base = (ROOT / "examples" / "tiny_transformer.py").read_text(encoding="utf-8")
    parts, count, copy = [], 0, 0
    while count < lines:
        text = base.replace("class Attention", f"class Attention{copy}").replace("class Block", f"class Block{copy}")
        parts.append(text)
        count += text.count("\n")
        copy += 1
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    models = transformers_models()

    print(f"== analyze() on ~3,000-line files (median of {args.repeat} runs)")
    samples: list[tuple[str, str]] = []
    if models is not None:
        torch_files = [p for p in models.glob("*/modeling_*.py") if not p.name.startswith(("modeling_tf_", "modeling_flax_"))]
        files = sorted(torch_files, key=lambda p: abs(len(p.read_text(encoding="utf-8").splitlines()) - 3000))
        samples = [(str(p.relative_to(models)), p.read_text(encoding="utf-8")) for p in files[:5]]
    else:
        samples = [("synthetic (examples/tiny_transformer.py repeated)", synthetic_file())]
    per_3000: list[float] = []
    above: list[float] = []
    for name, source in samples:
        n_lines = len(source.splitlines())
        total = median_ms(lambda source=source, name=name: analyze(source, name), args.repeat)
        parse = median_ms(lambda source=source: parse_only(source), args.repeat)
        findings = len(analyze(source, name))
        per_3000.append(total * 3000 / n_lines)
        above.append((total - parse) * 3000 / n_lines)
        print(f"  {name:50s} {n_lines:5d} lines  analyze {total:6.1f} ms  (ast.parse alone {parse:5.1f} ms)  {findings:3d} findings")
    print(f"  median per 3,000 lines: {statistics.median(per_3000):.1f} ms (target <= 30 ms), "
          f"of which {statistics.median(above):.1f} ms on top of ast.parse")

    print("\n== pathological shapes: analysis and planning every fix (one run each)")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))  # as the CLI and the server do
    for size in (500, 1000, 2000):
        shapes = {
            "if with N tensor operands": " and ".join(f"x.sum() > {i}" for i in range(size)),
            "sum of N terms": " + ".join(["x"] * size) + " > 0",
        }
        for label, test in shapes.items():
            source = f"import torch\n\n\n@torch.compile\ndef f(x):\n    if {test}:\n        x = x + 1\n    return x\n"
            started = time.perf_counter()
            found = len(analyze(source, "shape.py"))
            analysed = time.perf_counter() - started
            started = time.perf_counter()
            plan_fixes(source, "shape.py")
            planned = time.perf_counter() - started
            print(f"  {label:28s} N={size:5d}  analyze {analysed * 1000:7.1f} ms  plan every fix {planned * 1000:8.1f} ms  {found} findings")

    if models is None:
        print("\n(transformers is not installed: `make bench` installs it for the throughput numbers)")
        return 0
    print("\n== throughput over transformers models/*/modeling_*.py (one process)")
    paths = sorted(p for p in models.glob("*/modeling_*.py") if not p.name.startswith(("modeling_tf_", "modeling_flax_")))
    sources = [p.read_text(encoding="utf-8") for p in paths]
    lines = sum(len(s.splitlines()) for s in sources)
    started = time.perf_counter()
    findings = sum(len(analyze(s, str(p))) for p, s in zip(paths, sources))
    elapsed = time.perf_counter() - started
    print(f"  {len(paths)} files, {lines:,} lines, {findings} findings in {elapsed:.2f} s: "
          f"{len(paths) / elapsed:.0f} files/s, {lines / elapsed / 1000:.0f}k lines/s")

    print("\n== graphmend check --jobs 2 over the whole transformers models/ tree (wall time, files read from disk)")
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "graphmend", "check", str(models), "--jobs", "2", "--quiet", "--exit-zero"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "server")}, check=False,
    )
    elapsed = time.perf_counter() - started
    count = sum(1 for line in result.stdout.splitlines() if ": GM" in line)
    n_files = sum(1 for _ in models.rglob("*.py"))
    print(f"  {n_files} files, {count} findings, {elapsed:.1f} s wall (exit {result.returncode}; target < 60 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
