"""`graphmend check` against ruff on the same tree, in the same run: the speed a user compares.

    .venv/bin/python bench/check_vs_ruff.py TREE [--jobs 2] [--repeat 1]

TREE is any folder of Python files; issue 16 measures transformers' `models/` (4.57.6: 1,957
files, 0.96 M lines; `pip download --no-deps transformers==4.57.6` and unzip the wheel). Each tool
runs cold (ruff with `--no-cache`; graphmend has no cache between runs) with its output discarded;
ruff twice, with its default rules and with `--select ALL`. Prints seconds and the ratios.

With --repeat N the three commands run in turn N times (not each N times in a row): this machine's
speed drifts by a fifth from one minute to the next, and a ratio of runs minutes apart measured
the drift. The ratio printed is the median of each round's ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    ruff = shutil.which("ruff", path=str(VENV_BIN)) or shutil.which("ruff")
    graphmend = shutil.which("graphmend", path=str(VENV_BIN)) or shutil.which("graphmend")
    if ruff is None or graphmend is None:
        raise SystemExit("needs ruff and graphmend on PATH or in this interpreter's folder (make venv)")
    files = sum(1 for _ in args.tree.rglob("*.py"))
    commands = {
        "default": [ruff, "check", "--no-cache", "--exit-zero", "-q", str(args.tree)],
        "all": [ruff, "check", "--no-cache", "--select", "ALL", "--exit-zero", "-q", str(args.tree)],
        "ours": [graphmend, "check", "--jobs", str(args.jobs), "--exit-zero", "--quiet", str(args.tree)],
    }
    rounds = [{name: _seconds(command) for name, command in commands.items()} for _ in range(args.repeat)]
    ruff_default, ruff_all, ours = (statistics.median(r[name] for r in rounds) for name in commands)
    to_all = statistics.median(r["ours"] / r["all"] for r in rounds)
    to_default = statistics.median(r["ours"] / r["default"] for r in rounds)
    print(f"{args.tree}: {files} Python files; median of {args.repeat} cold round(s)")
    print(f"ruff check (default rules)        {ruff_default:7.1f} s")
    print(f"ruff check --select ALL           {ruff_all:7.1f} s")
    print(f"graphmend check --jobs {args.jobs:<2}         {ours:7.1f} s   {to_all:.1f}x ruff ALL, {to_default:.1f}x ruff default")
    if args.repeat > 1:
        print("rounds (ruff ALL, graphmend, ratio): " + ", ".join(f"{r['all']:.1f}/{r['ours']:.1f}/{r['ours'] / r['all']:.2f}" for r in rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
