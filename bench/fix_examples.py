"""Graphs and breaks of every example before and after `graphmend fix`, with real TorchDynamo.

    .venv/bin/python bench/fix_examples.py

For each examples/*.py with a `make_sample()`: fix it (safe fixes; then unsafe ones too) into a
temporary directory, compile each version with the counting backend (graph_breaks log records,
duplicates counted once), and compare the eager outputs with the original's on the sample input
on four more random inputs of the same shape, and on one with an outlier. Prints one row per version.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

import torch  # noqa: E402
from graphmend.rewrite import fix_source  # noqa: E402
from graphmend.rewrite.model import Safety  # noqa: E402
from graphmend.runtime.worker import capture  # noqa: E402


def _load(path: Path) -> Any:
    name = f"graphmend_example_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _inputs(args: tuple) -> list[tuple]:
    """The sample, four random variants (floating tensors redrawn, the rest kept), and one with an
    outlier (so tests on the largest value go both ways)."""
    floating = [isinstance(a, torch.Tensor) and a.is_floating_point() for a in args]
    variants = [args]
    for seed in range(4):
        generator = torch.Generator().manual_seed(seed)
        variants.append(tuple(torch.randn(a.shape, generator=generator, dtype=a.dtype) * (seed + 1) if f else a for a, f in zip(args, floating)))
    spiked = tuple(a.clone() if f else a for a, f in zip(args, floating))
    for a, f in zip(spiked, floating):
        if f:
            a.view(-1)[0] = 100.0
    variants.append(spiked)
    return variants


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.allclose(a, b, equal_nan=True, atol=1e-6)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def measure(path: Path) -> list[tuple[str, int, int, int, str]]:
    source = path.read_text(encoding="utf-8")
    versions = [("original", source, 0)]
    for label, level in (("safe fixes", Safety.SAFE), ("+ costly and unsafe fixes", Safety.UNSAFE)):
        result = fix_source(source, str(path), level=level)
        versions.append((label, result.fixed, len(result.applied)))
    rows = []
    reference: list[Any] | None = None
    with tempfile.TemporaryDirectory() as directory:
        for label, text, fixes in versions:
            file = Path(directory) / f"{path.stem}_{len(rows)}.py"
            file.write_text(text, encoding="utf-8")
            module = _load(file)
            model, args, kwargs = module.make_sample()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                observed = capture(model, args, kwargs)
                outputs = [model(*a, **kwargs) for a in _inputs(args)]
            unique = {(b["file"], b["line"], b["summary"]) for b in observed["breaks"]}
            if reference is None:
                reference, equal = outputs, "-"
            else:
                equal = "yes" if all(_same(x, y) for x, y in zip(reference, outputs)) else "NO"
            rows.append((label, fixes, observed["graphs"], len(unique), equal if observed["error"] is None else f"error: {observed['error'][:40]}"))
    return rows


def main() -> int:
    # dynamo's own warnings go to a handler made before any redirect; the counts come from capture()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    status = 0
    for path in sorted((ROOT / "examples").glob("*.py")):
        if "def make_sample" not in path.read_text(encoding="utf-8"):
            continue
        print(f"{path.relative_to(ROOT)}")
        print(f"  {'version':26} {'fixes':>5} {'graphs':>6} {'breaks':>6}  outputs equal to the original")
        for label, fixes, graphs, breaks, equal in measure(path):
            print(f"  {label:26} {fixes:>5} {graphs:>6} {breaks:>6}  {equal}")
            status |= equal not in ("-", "yes")
    return status


if __name__ == "__main__":
    sys.exit(main())
