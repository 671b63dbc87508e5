"""The record a probe prints of one compiled call (bench/models/probe.py, bench/vision/probe.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def break_record(result: dict[str, Any], coverage: dict[str, list[int]], package: Path) -> dict[str, Any]:
    """What a probe prints of a capture: graphs, error, break sites and covered lines, with paths
    relative to the package (bench/vision/probe.py prints the same)."""
    from graphmend.runtime.runner import merge_breaks

    return {
        "graphs": result["graphs"],
        "error": result["error"],
        "breaks": [
            {
                "path": str(s.path.relative_to(package)) if s.path.is_relative_to(package) else str(s.path),
                "line": s.line,
                "summary": s.summary,
                "gb_id": s.gb_id,
                "frame_skip": s.frame_skip,
            }
            for s in merge_breaks(result["breaks"], package)
        ],
        "coverage": {
            str(Path(name).relative_to(package)): lines for name, lines in coverage.items() if Path(name).is_relative_to(package)
        },
    }
