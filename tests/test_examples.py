"""The bundled examples behave as the README says: fixing them keeps every output and removes
breaks, measured with real dynamo by bench/fix_examples.py (the numbers in the closing notes)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if "def make_sample" in p.read_text(encoding="utf-8"))


def _bench():
    spec = importlib.util.spec_from_file_location("graphmend_bench_fix_examples", ROOT / "bench" / "fix_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_fixing_an_example_keeps_outputs_and_removes_breaks(path: Path) -> None:
    rows = {label: (fixes, graphs, breaks, equal) for label, fixes, graphs, breaks, equal in _bench().measure(path)}
    _, graphs, breaks, _ = rows["original"]
    assert breaks > 0, "an example without breaks shows nothing"
    for label in ("safe fixes", "+ costly and unsafe fixes"):
        fixes, fixed_graphs, fixed_breaks, equal = rows[label]
        assert equal == "yes", f"{label}: outputs differ from the original ({equal})"
        assert fixes > 0 and fixed_breaks < breaks and fixed_graphs < graphs, f"{label}: {rows[label]} vs {rows['original']}"


def test_the_gated_mlp_example_compiles_to_one_graph_after_safe_fixes() -> None:
    rows = {label: (graphs, breaks) for label, _, graphs, breaks, _ in _bench().measure(ROOT / "examples" / "gated_mlp.py")}
    assert rows["safe fixes"] == (1, 0)
