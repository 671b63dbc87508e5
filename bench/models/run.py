"""The real-model benchmark: every transformers model type that builds small, before and after
`graphmend fix`, against real TorchDynamo (issue 7).

    .venv/bin/python bench/models/run.py [--transformers 4.52.4 5.23.0] [--models gpt2 mixtral ...]
                                         [--jobs 2] [--timeout 300] [--speed]

Per corpus (a transformers release, installed apart by corpus.py): each model type runs in its own
process (probe.py) under a timeout. For the original package it records graphs and break sites
(counting backend + graph_breaks log) and the lines an eager call runs; the static findings of the
files on the forward path give recall (break sites a finding covers) and precision (findings on
lines that ran where dynamo broke). Models that break run again on the safe-fixed and
unsafe-fixed copies: break sites after, and the outputs compared with the original's on the same
weights and inputs. With --speed, eager and inductor latency (cold start with compile, steady-state
median) before and after. Writes bench/results/models-<version>.{json,md,png}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(HERE))

from corpus import CACHE, FIXED, VARIANTS, Corpus, prepare  # noqa: E402
from report import write_reports  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def probe(corpus: Corpus, variant: str, mode: str, model_type: str, timeout: float) -> dict[str, Any]:
    state = state_dir(corpus, model_type)
    env = dict(os.environ, PYTHONPATH=corpus.pythonpath(variant), GRAPHMEND_VARIANT=variant, TOKENIZERS_PARALLELISM="false")
    if mode == "speed":
        env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
        # a cold start means cold caches: inductor's on-disk caches would let a variant whose
        # graphs equal the original's skip compilation and look many times faster
        env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="graphmend-inductor-")
        env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
        env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / "probe.py"), mode, model_type, str(state)],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=HERE,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timeout after {timeout:g} s"}
    finally:
        if "TORCHINDUCTOR_CACHE_DIR" in env:
            shutil.rmtree(env["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"ok": False, "error": f"probe exited {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}"}


def model_types(corpus: Corpus) -> list[str]:
    code = "from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES as m; print('\\n'.join(sorted(m)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=corpus.pythonpath("original")), check=True)
    return [line for line in done.stdout.split() if line]


def static_scores(corpus: Corpus, record: dict[str, Any]) -> dict[str, Any]:
    """Recall over the break sites, precision over the findings on lines the forward pass ran."""
    from graphmend import analyze

    package = corpus.package("original")
    sites = {(b["path"], b["line"]) for b in record["breaks"] if not os.path.isabs(b["path"])}
    files = {path for path, _ in sites} | {p for p in record.get("coverage", {}) if p.startswith("models/")}
    predicted: set[tuple[str, int]] = set()
    confirmed = not_seen = 0
    for relative in sorted(files):
        path = package / relative
        try:
            findings = analyze(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError):
            continue
        ran = set(record.get("coverage", {}).get(relative, []))
        for finding in findings:
            if finding.code == "GM000":
                continue
            lines = set(range(finding.span.start_line, finding.span.end_line + 1))
            hit = {(relative, line) for line in lines} & sites
            predicted |= hit
            if lines & ran:
                confirmed += bool(hit)
                not_seen += not hit
    return {
        "sites": len(sites),
        "predicted": len(predicted),
        "missed": sorted(f"{path}:{line}" for path, line in sites - predicted),
        "findings_ran": confirmed + not_seen,
        "findings_confirmed": confirmed,
    }


def state_dir(corpus: Corpus, model_type: str) -> Path:
    """Where a model's weights, inputs and outputs per variant are kept between its probes."""
    return CACHE / "state" / corpus.version / model_type


def outputs_equal(state: Path, variant: str) -> str:
    """`identical`, `allclose` (1e-6), or `DIFFERENT`: the variant's eager outputs against the original's."""
    import torch

    try:
        before = torch.load(state / "outputs-original.pt", weights_only=True)
        after = torch.load(state / f"outputs-{variant}.pt", weights_only=True)
    except OSError:
        return "missing"
    if len(before) != len(after):
        return "DIFFERENT (structure)"
    if all(a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(before, after)):
        return "identical"
    if all(a.shape == b.shape and torch.allclose(a.double(), b.double(), atol=1e-6, rtol=1e-6, equal_nan=True) for a, b in zip(before, after)):
        return "allclose"
    if any(a.shape != b.shape for a, b in zip(before, after)):
        return "DIFFERENT (shapes)"
    # how far off, against the size of the values: rounding noise and a wrong rewrite look alike otherwise
    diff = max(float((a.double() - b.double()).abs().nan_to_num(0).max()) for a, b in zip(before, after) if a.numel())
    scale = max(float(a.double().abs().nan_to_num(0).max()) for a in before if a.numel())
    return f"DIFFERENT (max abs diff {diff:.2g}, largest value {scale:.2g})"


def run_model(corpus: Corpus, model_type: str, timeout: float) -> dict[str, Any]:
    row: dict[str, Any] = {"model": model_type, "original": probe(corpus, "original", "breaks", model_type, timeout)}
    original = row["original"]
    if not original.get("ok") or original.get("error") or not original["breaks"]:
        original.pop("coverage", None)
        # weights and inputs are kept only to compare and time the fixed variants of breaking
        # models: the whole 5.23.0 corpus's would fill a disk (t5gemma2 alone saved 16 GB)
        shutil.rmtree(state_dir(corpus, model_type), ignore_errors=True)
        return row
    row["static"] = static_scores(corpus, original)
    original.pop("coverage", None)  # used for precision; too bulky to keep in the results
    for variant in FIXED:
        probe_fixed(corpus, row, variant, timeout)
    return row


def probe_fixed(corpus: Corpus, row: dict[str, Any], variant: str, timeout: float) -> None:
    """A fixed variant's breaks, and its outputs against the original's, into the model's row."""
    row[variant] = probe(corpus, variant, "breaks", row["model"], timeout)
    row[variant].pop("coverage", None)
    row[f"{variant}_equal"] = outputs_equal(state_dir(corpus, row["model"]), variant) if row[variant].get("ok") else "not run"


def status(row: dict[str, Any], variants: tuple[str, ...] = FIXED) -> str:
    """One progress line: break sites before, and after each fixed variant probed."""
    original = row["original"]
    parts = [original.get("error") or f"{len(original['breaks'])} break sites"]
    for variant in variants:
        if variant in row:
            after = row[variant]
            count = len(after["breaks"]) if after.get("ok") and "breaks" in after else f"failed: {str(after.get('error'))[:80]}"
            parts.append(f"{variant} {count} ({row[f'{variant}_equal']})")
    return f"  {row['model']}: " + "; ".join(parts)


def save_rows(out: Path, rows: list[dict[str, Any]]) -> None:
    """Write the rows into an earlier run's JSON, keeping its other fields (after every model)."""
    data = json.loads(out.read_text(encoding="utf-8"))
    data["rows"] = rows
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")


def rerun_fixed(corpus: Corpus, rows: list[dict[str, Any]], variants: list[str], timeout: float, jobs: int, out: Path, only: list[str] | None) -> None:
    """Probe the fixed variants of the breaking models again (after the fixers changed), keeping
    each model's original probe; saved after every model."""
    todo = [r for r in rows if "safe" in r and (not only or r["model"] in only)]

    def redo(row: dict[str, Any]) -> dict[str, Any]:
        if not (state_dir(corpus, row["model"]) / "outputs-original.pt").exists():
            # a fresh cache (another machine): the original's weights, inputs and outputs are made
            # again, so the fixed variants run on the same ones and their outputs can be compared
            probe(corpus, "original", "breaks", row["model"], timeout)
        for variant in variants:
            probe_fixed(corpus, row, variant, timeout)
            row.get("speed", {}).pop(variant, None)  # timed on the old fixes
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for row in pool.map(redo, todo):
            save_rows(out, rows)
            print(status(row, tuple(variants)), flush=True)


def time_models(
    corpus: Corpus, rows: list[dict[str, Any]], timeout: float, out: Path, only: list[str] | None = None, variants: tuple[str, ...] = VARIANTS
) -> None:
    """Eager and inductor latency of each breaking model, original and fixed, one at a time (no
    other probe competes for the cores); saved after every model. Timing only some variants keeps
    the others' earlier times."""
    for row in rows:
        if "safe" not in row or (only and row["model"] not in only):
            continue
        row["speed"] = {**row.get("speed", {}), **{v: probe(corpus, v, "speed", row["model"], timeout * 3) for v in variants}}
        print(f"  speed {row['model']}: {json.dumps(row['speed'])}", flush=True)
        save_rows(out, rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transformers", nargs="+", default=["4.52.4", "5.23.0"])
    parser.add_argument("--models", nargs="*", help="model types (default: every one with an AutoModel)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--speed", action="store_true", help="also time eager and inductor before/after (sequential)")
    parser.add_argument("--resume", action="store_true", help="keep the model types an earlier (interrupted) run finished")
    parser.add_argument("--retry", nargs="+", help="with --resume: run these model types again (after a recipe fix), keeping the rest")
    parser.add_argument("--speed-only", action="store_true", help="only time the breaking models of an earlier run's JSON")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS), help="with --speed-only: which variants to time")
    parser.add_argument("--refix", nargs="+", choices=FIXED, help="fix these copies again and re-probe the breaking models of an earlier run's JSON with them")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.refix:
        for version in args.transformers:
            out = RESULTS / f"models-transformers-{version}.json"
            rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
            rerun_fixed(prepare(version, refix=tuple(args.refix)), rows, args.refix, args.timeout, args.jobs, out, args.models)
            print(write_reports(out), flush=True)
        return 0
    if args.speed_only:
        for version in args.transformers:
            out = RESULTS / f"models-transformers-{version}.json"
            rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
            time_models(prepare(version), rows, args.timeout, out, args.models, tuple(args.variants))
            print(write_reports(out), flush=True)
        return 0
    for version in args.transformers:
        corpus = prepare(version)
        models = args.models or model_types(corpus)
        print(f"== transformers {version}: {len(models)} model types", flush=True)
        rows: list[dict[str, Any]] = []
        out = RESULTS / f"models-transformers-{version}.json"
        if args.resume and out.is_file():  # go on after an interrupted run
            earlier = json.loads(out.read_text(encoding="utf-8"))["rows"]
            retry = set(args.retry or ()) & set(models)
            rows = [r for r in earlier if r["model"] not in retry]  # a subset run keeps the other types' rows
            done = {r["model"] for r in rows}
            models = [m for m in models if m not in done]
            print(f"   resuming: {len(done)} done, {len(models)} to go", flush=True)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for row in pool.map(lambda m, corpus=corpus: run_model(corpus, m, args.timeout), models):
                rows.append(row)
                # after every model: a run cut short still leaves its results (marked incomplete)
                out.write_text(json.dumps({"transformers": version, "complete": False, "rows": rows}, indent=1), encoding="utf-8")
                print(status(row), flush=True)
        if args.speed:
            time_models(corpus, rows, args.timeout, out)
        out.write_text(json.dumps({"transformers": version, "complete": True, "rows": rows}, indent=1), encoding="utf-8")
        print(write_reports(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
