"""Are the safe tier's kept-as-tensor numbers (ScalarFixer) bit-exact on this machine's device?

For a set of `n = <number read from a tensor>; return <tensor arithmetic on n>` functions, the
original and `graphmend fix`'s rewrite are run on the same inputs: eagerly (the rewrite must equal
the original bit for bit, dtypes included) and both under inductor (compared with each other; how
inductor itself rounds a Python scalar against a 0-d tensor is reported, not judged). The rewrite
must also compile to one graph (fullgraph). Runs on CUDA when there is one, else on the CPU:

    .venv/bin/python bench/scalar_exactness.py            # generate the rewrites here and check
    .venv/bin/python bench/scalar_exactness.py --write D  # only write the pairs to D (for a GPU machine
    python bench/scalar_exactness.py --check D            # without GraphMend's dependencies), then check them there

Measured at stop 35: on this machine's CPU (torch 2.13) every case is exact. On an H200 (torch 2.11)
every case is exact eagerly since `x / n` goes through `_graphmend_divide_by_number`: CUDA divides a
tensor by a Python number as a product with the reciprocal of the number's float64 value, rounded
to the compute dtype (`x * torch.tensor(1.0 / b).float()` matched 200 of 200, a true division 7;
with a plain `x / n` 11-22 of 30 quotients differed). Under inductor the rewrite and the original
can differ (f0d, half, locals), as inductor(original) differs from the eager original: inductor
takes a Python scalar and a 0-d tensor differently.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

CASES = {  # name: (the number's binding, the return expression)
    "f64": ("y.float().mean().item() * 0.1", "x.double() * n"),
    "f32": ("y.float().mean().item() * 0.1", "x.float() * n"),
    "f0d": ("y.float().mean().item() * 0.1", "x.float().sum() * n"),
    "clamp": ("max(y.float().abs().mean().item(), 1e-6)", "x.double() / n"),
    "half": ("y.half().mean().item() + 0.1", "x.float() * n"),
    "rebind": ("y.float().abs().mean().item()\n    n = max(n, 1e-6)", "x.double() / n"),
    "locals": ("y.float().mean().item()\n    m = n * 2.0 + 1.0\n    n = m", "x.double() * n + x.float().sum() * m"),
    "div32": ("y.float().mean().item() * 0.1", "x.float() / n"),
    "divcount": ("(y > 0).sum().item()", "x.float() / n"),
}
TEMPLATE = "import torch\n\n\ndef f(x: torch.Tensor, y: torch.Tensor):\n    n = {number}\n    return {use}\n"


def write_pairs(folder: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from graphmend.rewrite import fix_source

    folder.mkdir(parents=True, exist_ok=True)
    for name, (number, use) in CASES.items():
        source = TEMPLATE.format(number=number, use=use)
        compiled = source.replace("def f(", "@torch.compile\ndef f(")
        fixed = fix_source(compiled, f"{name}.py").fixed.replace("@torch.compile\ndef f(", "def f(")
        (folder / f"{name}_orig.py").write_text(source, encoding="utf-8")
        (folder / f"{name}_fixed.py").write_text(fixed, encoding="utf-8")


def check_pairs(folder: Path) -> int:
    import torch
    from torch._dynamo.testing import CompileCounter

    device = "cuda" if torch.cuda.is_available() else "cpu"
    print("torch", torch.__version__, "on", torch.cuda.get_device_name() if device == "cuda" else "cpu")
    differing = 0
    for original_path in sorted(folder.glob("*_orig.py")):
        name = original_path.stem[: -len("_orig")]
        original, fixed = _load(original_path), _load(folder / f"{name}_fixed.py")
        torch._dynamo.reset()
        counter = CompileCounter()
        torch.compile(fixed, backend=counter, fullgraph=True)(torch.randn(5, device=device), torch.randn(7, device=device))
        fixed_inductor, original_inductor = torch.compile(fixed, backend="inductor"), torch.compile(original, backend="inductor")
        generator = torch.Generator().manual_seed(0)
        eager = compiled = inductor_vs_eager = 0
        for _ in range(30):
            x = torch.randn(5, generator=generator).to(device)
            y = (torch.randn(7, generator=generator) * 1e-3).to(device)
            want = original(x, y)
            eager += not _same(fixed(x, y), want)
            got = fixed_inductor(x, y)
            compiled += not _same(got, original_inductor(x, y))
            inductor_vs_eager += not _same(got, want)
        differing += eager
        print(f"{name:9s} graphs {counter.frame_count}; eager: rewrite differs on {eager}/30; inductor: rewrite vs original "
              f"{compiled}/30 (inductor's rewrite vs the eager original {inductor_vs_eager}/30)")
    print(f"eager differences in all: {differing}")
    return 1 if differing else 0


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    import torch

    return a.dtype == b.dtype and torch.equal(a, b)


def _load(path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, help="only write the original/rewrite pairs here")
    parser.add_argument("--check", type=Path, help="only check the pairs written here")
    args = parser.parse_args()
    if args.write:
        write_pairs(args.write)
        return 0
    if args.check:
        return check_pairs(args.check)
    with tempfile.TemporaryDirectory() as folder:
        write_pairs(Path(folder))
        return check_pairs(Path(folder))


if __name__ == "__main__":
    raise SystemExit(main())
