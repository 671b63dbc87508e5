"""Draw a reproducible random sample of findings on the installed transformers models/ tree, with
context, for a human to judge true or false (the precision review in the closing notes).

    .venv/bin/python bench/review_sample.py [--n 30] [--seed 2026] [--context 6]

Also prints the count of findings per code over the whole tree.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend import analyze  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--context", type=int, default=6)
    args = parser.parse_args()
    import transformers

    models = Path(transformers.__file__).parent / "models"
    everything = []
    for path in sorted(models.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for finding in analyze(source, str(path)):
            everything.append((path, source, finding))
    counts = collections.Counter(f.code for _, _, f in everything)
    print(f"transformers {transformers.__version__}: {len(everything)} findings in models/")
    for code, count in sorted(counts.items()):
        print(f"  {code}: {count}")
    sample = random.Random(args.seed).sample(everything, min(args.n, len(everything)))
    for number, (path, source, finding) in enumerate(sample, start=1):
        lines = source.splitlines()
        start = max(0, finding.span.start_line - 1 - args.context)
        end = min(len(lines), finding.span.end_line + 2)
        print(f"\n#{number} {path.relative_to(models)}:{finding.span.start_line} {finding.code} [{finding.effect}] in {finding.function}")
        print(f"   {finding.message[:220]}")
        for index in range(start, end):
            marker = ">>" if finding.span.start_line - 1 <= index <= finding.span.end_line - 1 else "  "
            print(f"   {marker}{index + 1:5d} {lines[index]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
