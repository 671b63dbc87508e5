"""Static recall of the current analyser over the break sites an earlier bench/models run recorded,
without running dynamo again: the sites are in the run's JSON, the code is the same release.

    .venv/bin/python bench/models/rescore.py bench/results/models-transformers-4.57.6.json PACKAGE [--jobs 2]

PACKAGE is that release's `transformers/` folder (an unzipped wheel will do: `pip download
--no-deps transformers==4.57.6`). Two measures, because users meet two: each file analysed alone
(what run.py scores: a helper module that nothing in it compiles has no findings), and
`graphmend check` over the whole package, as a user runs it, with calls from compiled code followed
into other modules (utilities, inherited methods). Latent findings count as covering: dynamo does
not report a break they hide. Sites that follow another break (report.secondary_sites) are shown
apart, as in the report.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import secondary_sites


def _covered(findings: Iterable[tuple[str, int, int]], sites: set[tuple[str, int]]) -> set[tuple[str, int]]:
    hit: set[tuple[str, int]] = set()
    for path, start, end in findings:
        hit |= {(path, line) for line in range(start, end + 1)} & sites
    return hit


def _per_file(package: Path, files: set[str]) -> list[tuple[str, int, int]]:
    from graphmend import analyze

    found = []
    for relative in sorted(files):
        try:
            text = (package / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found += [(relative, f.span.start_line, f.span.end_line) for f in analyze(text, str(package / relative)) if f.code != "GM000"]
    return found


def _whole_package(package: Path, jobs: int) -> list[tuple[str, int, int]]:
    graphmend = Path(sys.executable).with_name("graphmend")
    done = subprocess.run(
        [str(graphmend), "check", "--format", "json", "--exit-zero", "--jobs", str(jobs), "."],
        capture_output=True, text=True, cwd=package, check=True,
    )
    return [(r["path"], r["line"], r.get("end_line", r["line"])) for r in json.loads(done.stdout) if r["code"] != "GM000"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("package", type=Path, help="the release's transformers/ folder")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = json.loads(args.results.read_text(encoding="utf-8"))["rows"]
    breaking = [r for r in rows if r["original"].get("ok") and r["original"].get("breaks")]
    per_row = {r["model"]: {(b["path"], b["line"]) for b in r["original"]["breaks"] if not b["path"].startswith("/")} for r in breaking}
    files = {path for sites in per_row.values() for path, _ in sites}
    measures = {"each file alone": _per_file(args.package, files), "graphmend check over the package": _whole_package(args.package, args.jobs)}
    total = sum(len(s) for s in per_row.values())
    print(f"{args.results.name}: {len(breaking)} breaking models, {total} break sites")
    for name, findings in measures.items():
        covered = primary = primary_covered = 0
        missed = []
        for row in breaking:
            sites = per_row[row["model"]]
            hit = _covered(findings, sites)
            secondary = secondary_sites({**row, "static": {"missed": [f"{p}:{n}" for p, n in sites - hit]}})
            covered += len(hit)
            primary += len([s for s in sites if f"{s[0]}:{s[1]}" not in secondary])
            primary_covered += len([s for s in hit if f"{s[0]}:{s[1]}" not in secondary])
            missed += [f"{row['model']} {p}:{n}" for p, n in sorted(sites - hit) if f"{p}:{n}" not in secondary]
        print(f"- {name}: {covered}/{total} ({100 * covered / total:.0f}%); {primary_covered}/{primary} "
              f"({100 * primary_covered / primary:.0f}%) of the sites that do not follow another break")
        for line in missed:
            print(f"    missed: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
