"""Run the analyser in strict mode over every .py file of installed packages; report any crash.

    .venv/bin/python bench/robustness.py [package ...]     # default: transformers torch

Strict mode re-raises internal errors instead of turning them into a GM001 note, so a bug in a
rule cannot hide. Prints one line per failure and a summary; exit status 1 if anything failed.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend import analyze  # noqa: E402
from graphmend.files import read_source  # noqa: E402


def sweep(package: str) -> tuple[int, int, int, list[str]]:
    module = importlib.import_module(package)
    root = Path(module.__file__).parent  # type: ignore[arg-type]
    files = sorted(root.rglob("*.py"))
    failures: list[str] = []
    skipped = 0
    findings = 0
    for path in files:
        source = read_source(path, 10_000_000)
        if source.text is None:
            skipped += 1
            continue
        try:
            findings += len(analyze(source.text, str(path), strict=True))
        except Exception:
            failures.append(f"{path}: {traceback.format_exc().strip().splitlines()[-1]}")
    return len(files), skipped, findings, failures


def main() -> int:
    packages = sys.argv[1:] or ["transformers", "torch"]
    failed = False
    for package in packages:
        started = time.perf_counter()
        total, skipped, findings, failures = sweep(package)
        elapsed = time.perf_counter() - started
        print(f"{package}: {total} files ({skipped} skipped), {findings} findings, {len(failures)} crashes, {elapsed:.1f} s")
        for failure in failures:
            print("  CRASH", failure)
        failed |= bool(failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
