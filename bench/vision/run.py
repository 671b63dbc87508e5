"""Static recall on timm and torchvision detection models against real TorchDynamo (issue 16).

    .venv/bin/python bench/vision/run.py [--jobs 2] [--timeout 400] [--models NAME ...] [--rescore]

Installs timm 1.0.31 and torchvision 0.28.0 (no dependencies) under .cache/bench/vision, with
PIL, and makes torchvision importable next to the CPU torch (torchvision_shim.py). Models tried:
torchvision's eight detection models, and from timm one model per model module (98 modules; the
smallest-named architecture of each, chosen by `probe.py`'s rule below, not by whether it breaks).
Each model runs in its own process (probe.py): random weights, eval mode, one small input,
compiled with the counting backend; break sites are the innermost frames inside the package.
Then `graphmend check` runs over each whole installed package, as a user would run it, and a site
counts as found when a finding's range covers its line. Precision: findings on lines the eager
call ran, in files where the run saw a break site, that cover a site. Writes
bench/results/vision.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = Path(os.environ.get("GRAPHMEND_BENCH_CACHE", ROOT / ".cache" / "bench")) / "vision"
SITE = CACHE / "site"
RESULTS = ROOT / "bench" / "results"
PINS = ("timm==1.0.31", "torchvision==0.28.0")
SMALL_WORDS = ("pico", "femto", "atto", "nano", "tiny", "xxs", "xs", "small", "_s", "mobile", "lite", "_t", "18", "_b0", "_a", "0_5")


def prepare() -> None:
    """The two packages and PIL in a folder of their own (never the repository's environment)."""
    if (SITE / "timm").is_dir() and (SITE / "torchvision").is_dir() and (SITE / "PIL").is_dir():
        return
    wheels = CACHE / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "download", "--no-deps", "-d", str(wheels), *PINS], check=True)
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(SITE)
    subprocess.run([*pip, "install", "--no-deps", "--target", str(SITE), "pillow"], check=True)


def pythonpath() -> str:
    return os.pathsep.join([str(SITE), str(HERE), str(ROOT / "server")])


def timm_models() -> list[str]:
    """One architecture per timm model module: the first, by name, of those whose name says small."""
    code = (
        "import torchvision_shim; torchvision_shim.install()\n"
        "import json, timm\nfrom timm.models import _registry\n"
        "print(json.dumps({m: sorted(n) for m, n in _registry._module_to_models.items()}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ, PYTHONPATH=pythonpath()))
    modules: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    chosen = []
    for names in modules.values():
        small = [n for n in names if any(word in n for word in SMALL_WORDS)]
        chosen.append((small or names)[0])
    return sorted(chosen)


def probe(family: str, name: str, timeout: float) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=pythonpath(), OMP_NUM_THREADS="1")
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / "probe.py"), family, name], capture_output=True, text=True, timeout=timeout, env=env, cwd=HERE
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timeout after {timeout:g} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"ok": False, "error": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return json.loads(lines[-1])


def check(package: Path, jobs: int) -> list[dict[str, Any]]:
    graphmend = Path(sys.executable).with_name("graphmend")
    done = subprocess.run(
        [str(graphmend), "check", "--format", "json", "--exit-zero", "--jobs", str(jobs), "."],
        capture_output=True, text=True, cwd=package, check=True,
    )
    return [r for r in json.loads(done.stdout) if r["code"] != "GM000"]


def score(rows: list[dict[str, Any]], findings: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Recall over break sites, precision over findings on lines that ran (see the module docstring)."""
    sites = found = ran = confirmed = 0
    missed: list[str] = []
    for row in rows:
        result = row["result"]
        if not result.get("ok") or not result.get("breaks"):
            continue
        spans = [(f["path"], f["line"], f.get("end_line", f["line"]), f.get("latent", False)) for f in findings[row["family"]]]
        at = {(b["path"], b["line"]) for b in result["breaks"]}
        for path, line in sorted(at):
            sites += 1
            if any(p == path and start <= line <= end for p, start, end, _ in spans):
                found += 1
            else:
                missed.append(f"{row['family']} {row['model']} {path}:{line}")
        broken_files = {path for path, _ in at}
        for path, start, end, latent in spans:
            lines_ran = set(result.get("coverage", {}).get(path, ()))
            if latent or path not in broken_files or start not in lines_ran:
                continue
            ran += 1
            confirmed += any(p == path and start <= line <= end for p, line in at)
    return {"sites": sites, "found": found, "missed": missed, "findings_ran": ran, "findings_confirmed": confirmed}


def write(rows: list[dict[str, Any]], totals: dict[str, Any]) -> None:
    RESULTS.mkdir(exist_ok=True)
    slim = [{**row, "result": {k: v for k, v in row["result"].items() if k != "coverage"}} for row in rows]
    (RESULTS / "vision.json").write_text(json.dumps({"pins": PINS, "rows": slim, "totals": totals}, indent=1) + "\n", encoding="utf-8")
    ran = [r for r in rows if r["result"].get("ok")]
    breaking = [r for r in ran if r["result"].get("breaks")]
    lines = [
        f"# timm and torchvision detection models: static recall against dynamo ({', '.join(PINS)})",
        "",
        f"{len(rows)} models tried, {len(ran)} built small and ran, {len(breaking)} break, at {totals['sites']} sites.",
        "",
        f"Recall (`graphmend check` over each whole package; a finding's range covers the site): "
        f"{totals['found']}/{totals['sites']}. Precision (findings on lines the eager call ran, in files with a "
        f"break site, that cover a site): {totals['findings_confirmed']}/{totals['findings_ran']}.",
        "",
        "| family | model | graphs | break sites | found |",
        "|---|---|---|---|---|",
    ]
    for row in breaking:
        result = row["result"]
        sites = [f"{b['path']}:{b['line']} {b['summary']}" for b in result["breaks"]]
        missed = [m.split(" ", 2)[2] for m in totals["missed"] if m.split(" ")[1] == row["model"]]
        lines.append(f"| {row['family']} | {row['model']} | {result['graphs']} | {'<br>'.join(sites)} | {len(sites) - len(missed)}/{len(sites)} |")
    lines += ["", "Break sites no finding covers:", ""] + [f"- {m}" for m in totals["missed"]]
    lines += ["", "Models that ran without a break:", "", ", ".join(r["model"] for r in ran if not r["result"].get("breaks"))]
    lines += ["", "Models that did not build or run small:", ""]
    lines += [f"- {r['model']}: {r['result'].get('error', '')[:120]}" for r in rows if not r["result"].get("ok")]
    (RESULTS / "vision.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_probes(only: list[str] | None, jobs: int, timeout: float) -> list[dict[str, Any]]:
    from probe import DETECTION

    todo = [("torchvision", name) for name in DETECTION] + [("timm", name) for name in timm_models()]
    if only:
        todo = [(family, name) for family, name in todo if name in only]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda job: probe(*job, timeout), todo))
    rows = []
    for (family, name), result in zip(todo, results):
        rows.append({"family": family, "model": name, "result": result})
        print(f"{family:11} {name:40} {'ok' if result.get('ok') else 'FAILED'} {len(result.get('breaks') or [])} sites", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=400)
    parser.add_argument("--models", nargs="*", help="only these (timm or torchvision detection names)")
    parser.add_argument("--rescore", action="store_true", help="score today's analyser against the last run's dynamo records")
    args = parser.parse_args()
    prepare()
    probes = CACHE / "probes.json"  # the full records (with covered lines) of the last run
    if args.rescore:
        rows = json.loads(probes.read_text(encoding="utf-8"))
    else:
        rows = run_probes(args.models, args.jobs, args.timeout)
        probes.write_text(json.dumps(rows) + "\n", encoding="utf-8")
    findings = {family: check(SITE / family, args.jobs) for family in ("timm", "torchvision")}
    totals = score(rows, findings)
    write(rows, totals)
    print(f"recall {totals['found']}/{totals['sites']}, precision {totals['findings_confirmed']}/{totals['findings_ran']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
