"""Static recall and precision on a corpus of cases: `graphmend check` against the break sites real
TorchDynamo reported for the same files (the JSON `run.py --json` writes; `last_run.json` by default).

    .venv/bin/python bench/heldout/static.py [--corpus bench/working --results working.json] [--name-compiled]

- A *site* is a line of a case where dynamo broke on its normal inputs (`sites`) or only on the
  inputs that raise (`error_path_sites`); both are breaks a finding may rightly point at.
- Strict recall: the normal-input sites that a finding's range covers, over all of them.
- Precision: findings whose range covers a site (either kind), over all findings that are not
  latent. A finding in code the inputs never reached counts against precision: the cases' inputs
  are written to reach every branch, so such a finding is one dynamo does not confirm.
- Latent findings (after a break that makes dynamo run their function eagerly: GraphMend says
  dynamo does not reach them yet) are counted apart: `latent_at_site` is those dynamo does break
  at, i.e. wrongly called latent.
- `--name-compiled` names what `make()` returns as compiled (`[tool.graphmend] compiled`), as
  run.py --name-compiled does: the case is imported and `make()` called to learn that name. By
  default GraphMend infers what is compiled, as a user's first run does: a case whose `make()`
  returns a plain function and never calls `torch.compile` has no compiled code to it then.

Each case is checked in a scratch folder of its own (so no pyproject.toml of this repository applies).
Prints a row per case with a miss or a false finding (rule codes and lines only), then the totals.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _entry(case: Path) -> str | None:
    """The name run.py gives what the case's `make()` returns (imports and runs the case's module)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import run  # run.py beside this file: the same naming as the fix measurement

    module = run._import(case, f"static_{case.stem}")
    return run.compiled_entry(module.make(), case)


def _findings(case: Path, entry: str | None) -> list[dict]:
    """`graphmend check --format json` on a copy of `case`, with `entry` named compiled if given."""
    with tempfile.TemporaryDirectory(prefix="gm-static-") as scratch:
        target = Path(scratch) / case.name
        shutil.copyfile(case, target)
        if entry is not None:
            (Path(scratch) / "pyproject.toml").write_text(f'[tool.graphmend]\ncompiled = ["{entry}"]\n', encoding="utf-8")
        script = Path(sys.executable).with_name("graphmend")
        command = [str(script)] if script.exists() else [sys.executable, "-m", "graphmend"]
        done = subprocess.run(
            [*command, "check", case.name, "--format", "json", "--exit-zero"], capture_output=True, text=True, cwd=scratch, timeout=120
        )
        if done.returncode != 0:
            raise RuntimeError(f"{case.name}: graphmend check exited {done.returncode}: {done.stderr[-400:]}")
        return [f for f in json.loads(done.stdout) if not f["code"].startswith("GM00")]


def _covers(finding: dict, line: int) -> bool:
    return finding["line"] <= line <= finding["end_line"] or line == finding.get("break_line")


def measure(cases_dir: Path, results: list[dict], name_compiled: bool) -> dict:
    """Per-case misses and false findings, and the corpus totals."""
    sites = found = findings = confirmed = latent = latent_at_site = 0
    rows = []
    for result in results:
        if "crash" in result:
            continue
        case = cases_dir / f"{result['case']}.py"
        normal = {int(line) for line in result["sites"]}
        error_path = {int(line) for line in result.get("error_path_sites", {})}
        everything = _findings(case, _entry(case) if name_compiled else None)
        reported = [f for f in everything if not f.get("latent")]
        latent_findings = [f for f in everything if f.get("latent")]
        missed = sorted(line for line in normal if not any(_covers(f, line) for f in everything))
        false = [f for f in reported if not any(_covers(f, line) for line in normal | error_path)]
        latent += len(latent_findings)
        latent_at_site += sum(1 for f in latent_findings if any(_covers(f, line) for line in normal | error_path))
        sites += len(normal)
        found += len(normal) - len(missed)
        findings += len(reported)
        confirmed += len(reported) - len(false)
        if missed or false:
            rows.append(
                {
                    "case": result["case"],
                    "missed_lines": missed,
                    "false_findings": [f"{f['code']}@{f['line']}" for f in false],
                }
            )
    return {
        "sites": sites,
        "found": found,
        "recall": found / sites if sites else None,
        "findings": findings,
        "confirmed": confirmed,
        "precision": confirmed / findings if findings else None,
        "latent": latent,
        "latent_at_site": latent_at_site,
        "cases_with_differences": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(HERE), help="a folder with cases/ (default: the held-out corpus)")
    parser.add_argument("--results", help="run.py's JSON for that corpus (default: <corpus>/last_run.json)")
    parser.add_argument("--name-compiled", action="store_true", help="name make()'s result as compiled, as run.py --name-compiled does")
    parser.add_argument("--json", help="write the measurement here")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus).resolve()
    results_path = Path(args.results) if args.results else corpus / "last_run.json"
    if not results_path.exists():
        parser.error(f"no dynamo results at {results_path}: run `bench/heldout/run.py --corpus {corpus} --json FILE` first")
    results = json.loads(results_path.read_text(encoding="utf-8"))["cases"]
    measured = measure(corpus / "cases", results, args.name_compiled)
    for row in measured["cases_with_differences"]:
        print(f"{row['case']:<40} missed lines {row['missed_lines'] or '-'}  false {', '.join(row['false_findings']) or '-'}")
    print(
        f"\nstrict recall {measured['found']}/{measured['sites']} = {measured['recall']:.2f}; "
        f"precision {measured['confirmed']}/{measured['findings']} = {measured['precision']:.2f}; "
        f"{measured['latent']} latent findings ({measured['latent_at_site']} where dynamo does break) "
        f"({len(results)} cases, dynamo sites from {results_path.name})"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(measured, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
