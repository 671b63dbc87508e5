"""The safe tier on the transformers models that break: break sites before and after, outputs.

    .venv/bin/python bench/models/safe_tier.py OUT.json [MODEL_TYPE ...] [--version 4.57.6]

The procedure of stops 53-58, kept here so that it survives a fresh machine: install the release
with corpus.py (`prepare` makes the fixed copies of the whole package; or copy the package to
`.cache/bench/transformers-<v>/safe/transformers` and run `graphmend fix` on the folders the models
use), then probe each model on the original and the safe copy, one process each (probe.py: counting
backend + graph_breaks log, eager outputs on the same weights and inputs). Without model types it
probes the ones that break in `bench/results/models-transformers-<v>.json`. Prints a JSON line per
model and the totals; a site is counted per (file, line) of each variant, so a fix that moves
lines moves the site, not the count.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import CACHE, Corpus  # noqa: E402
from run import RESULTS, outputs_equal, probe, state_dir  # noqa: E402


def breaking_models(version: str) -> list[str]:
    rows = json.loads((RESULTS / f"models-transformers-{version}.json").read_text(encoding="utf-8"))["rows"]
    return [row["model"] for row in rows if row.get("original", {}).get("breaks")]


def sites(record: dict[str, Any]) -> list[str]:
    return sorted({f"{b['path']}:{b['line']}" for b in record.get("breaks") or []})


def measure(corpus: Corpus, model_type: str, timeout: float) -> dict[str, Any]:
    original = probe(corpus, "original", "breaks", model_type, timeout)
    safe = probe(corpus, "safe", "breaks", model_type, timeout) if original.get("ok") and original.get("breaks") else {}
    row = {
        "model": model_type,
        "before": sites(original),
        "after": sites(safe) if safe.get("ok") else None,  # None: the safe copy did not run
        "outputs": outputs_equal(state_dir(corpus, model_type), "safe") if safe else "-",
        "error": original.get("error") or safe.get("error"),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("models", nargs="*")
    parser.add_argument("--version", default="4.57.6")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    corpus = Corpus(args.version, CACHE / f"transformers-{args.version}")
    if not (corpus.package("safe") / "__init__.py").is_file():
        parser.error(f"no safe copy at {corpus.package('safe')}: see this script's docstring")
    models = args.models or breaking_models(args.version)
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda m: measure(corpus, m, args.timeout), models))
    args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    ran = [r for r in rows if r["before"]]
    before = sum(len(r["before"]) for r in ran)
    after = sum(len(r["after"]) if r["after"] is not None else len(r["before"]) for r in ran)
    changed = [(r["model"], r["outputs"]) for r in ran if r["outputs"] not in ("identical", "allclose")]
    print(f"{len(ran)} models that ran and broke: {before} sites before, {after} after the safe tier, {before - after} removed ({(before - after) / max(before, 1):.1%}); outputs not identical or allclose: {changed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
