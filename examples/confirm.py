"""Compare GraphMend's static findings for tiny_transformer.py with what real TorchDynamo does.

Run by `make demo`: compiles `make_sample()`'s model with a graph-counting backend, reads the
`graph_breaks` log, and lines each break up with the static finding on that line.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from graphmend import analyze  # noqa: E402
from graphmend.runtime.worker import capture, locate  # noqa: E402

import tiny_transformer  # noqa: E402


def main() -> int:
    path = HERE / "tiny_transformer.py"
    findings = analyze(path.read_text(encoding="utf-8"), str(path))
    model, args, kwargs = tiny_transformer.make_sample()
    with contextlib.redirect_stderr(io.StringIO()):
        result = capture(model, args, kwargs)
    files = {os.path.realpath(path)}
    runtime: dict[int, list[dict]] = {}
    for record in result["breaks"]:
        _, line = locate(record, files)
        runtime.setdefault(line, []).append(record)
    print(f"dynamo compiled {result['graphs']} graphs for one forward call ({len(result['breaks'])} break records)")
    print(f"{'line':>5}  {'static':8} {'dynamo':34} effect")
    static_lines = {f.span.start_line: f for f in findings}
    for line in sorted(set(static_lines) | set(runtime)):
        finding = static_lines.get(line)
        records = runtime.get(line, [])
        static = finding.code if finding else "-"
        dynamo = records[0]["summary"][:34] if records else "(not reached by this input)"
        skipped = any(r["frame_skip"] for r in records)
        effect = "whole function eager" if skipped else ("graph split" if records else "")
        print(f"{line:>5}  {static:8} {dynamo:34} {effect}")
    missed = sorted(set(runtime) - set(static_lines))
    if missed:
        print(f"runtime-only breaks (static analysis missed): {missed}")
        return 1
    print("every break dynamo reported was predicted statically.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
