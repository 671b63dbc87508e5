"""Run the rewrites over a whole installed package: no crash, every output parses, idempotent.

    GRAPHMEND_STRICT=1 .venv/bin/python bench/fix_sweep.py [--package transformers] [--level safe|costly|unsafe] [--jobs 2]

For every .py file: fix_source (safe fixes; riskier tiers too with --level), check the result parses,
fix the result again and check nothing changes. Prints totals, fixes by code, declines by reason
(for the findings that remain, on the whole package and on its models/ subtree), and any file that
crashed, did not parse or was not a fixed point. Exit status 1 if any such file exists.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import importlib.util
import os
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend.batch import each_result  # noqa: E402
from graphmend.files import read_source  # noqa: E402
from graphmend.rewrite import fix_source  # noqa: E402
from graphmend.rewrite.model import Safety  # noqa: E402


def sweep_file(job: tuple[str, Safety]) -> dict:
    path, level = job
    source = read_source(Path(path), 10_000_000)
    if source.text is None:
        return {"path": path, "skipped": True}
    try:
        first = fix_source(source.text, path, level=level)
        try:
            ast.parse(first.fixed)
            parses = True
        except SyntaxError:
            parses = False
        second = fix_source(first.fixed, path, level=level) if first.changed else first
        return {
            "path": path,
            "fixed": [f.finding.code for f in first.applied],
            "declined": [d.key for d in first.declined],
            "remaining": len(first.remaining),
            "parses": parses,
            "idempotent": second.fixed == first.fixed,
            "lines_changed": sum(1 for a, b in zip(first.original.splitlines(), first.fixed.splitlines()) if a != b)
            + abs(len(first.original.splitlines()) - len(first.fixed.splitlines())),
        }
    except Exception:
        return {"path": path, "crash": traceback.format_exc().strip().splitlines()[-1]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--package", default="transformers")
    parser.add_argument("--level", choices=[s.value for s in Safety], default="safe")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    # located, not imported: a package whose dependencies are missing here is still read whole
    spec = importlib.util.find_spec(args.package)
    if spec is None or not spec.submodule_search_locations:
        parser.error(f"no installed package named {args.package}")
    root = Path(next(iter(spec.submodule_search_locations)))
    try:
        version = importlib.metadata.version(args.package)
    except importlib.metadata.PackageNotFoundError:
        version = ""
    files = sorted(str(p) for p in root.rglob("*.py"))
    started = time.perf_counter()
    results = list(each_result(sweep_file, [(f, Safety(args.level)) for f in files], args.jobs))
    elapsed = time.perf_counter() - started
    crashes = [r for r in results if "crash" in r]
    unparsable = [r for r in results if r.get("parses") is False]
    not_fixed_point = [r for r in results if r.get("idempotent") is False]
    done = [r for r in results if "fixed" in r]
    models = [r for r in done if f"{os.sep}models{os.sep}" in r["path"]]
    mode = f"up to {args.level}"
    print(f"{args.package} {version}: {len(files)} files, {mode} fixes, {elapsed:.0f} s")
    print(f"  crashes: {len(crashes)}, outputs that do not parse: {len(unparsable)}, not a fixed point: {len(not_fixed_point)}")
    for label, group in (("whole package", done), ("models/", models)):
        fixed = Counter(code for r in group for code in r["fixed"])
        declined = Counter(key for r in group for key in r["declined"])
        remaining = sum(r["remaining"] for r in group)
        changed = sum(1 for r in group if r["fixed"])
        print(f"\n== {label}: {sum(fixed.values())} findings fixed in {changed} files; {remaining} findings left, "
              f"{sum(declined.values())} of them declined by a fixer (the rest have no fixer at level {args.level})")
        for code, count in sorted(fixed.items()):
            print(f"    fixed     {code}: {count}")
        for key, count in declined.most_common():
            print(f"    declined  {key}: {count}")
    for r in crashes:
        print("CRASH", r["path"], r["crash"])
    for r in unparsable:
        print("UNPARSABLE OUTPUT", r["path"])
    for r in not_fixed_point:
        print("NOT A FIXED POINT", r["path"])
    return 1 if crashes or unparsable or not_fixed_point else 0


if __name__ == "__main__":
    sys.exit(main())
