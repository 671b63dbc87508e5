"""What the fixed-shape MoE dispatch costs, and what it buys: one Mixtral-style sparse MoE block
at realistic sizes, the original dispatch (loop over the experts hit, data-dependent gathers)
against the rewrite `graphmend fix --unsafe-fixes` makes (every expert on every token, masked
accumulation), eager and under torch.compile (inductor, CPU).

    .venv/bin/python bench/moe_cost.py [--tokens 256] [--hidden 512] [--experts 8] [--top-k 2] [--repeat 20]

The rewritten block is produced by running the real fixer on the original's source, so this
measures the code the tool writes. Prints median milliseconds per forward.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import importlib.util
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from graphmend.rewrite import fix_source  # noqa: E402

# the Mixtral-style block of the fixer's own test fixture: the benchmark and the tests share one
# copy of the dispatch loop
BLOCK = (Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "MoEDispatchFixer" / "hit_list.in.py").read_text(encoding="utf-8")


def load(source: str, name: str):  # type: ignore[no-untyped-def]
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def median_ms(fn, x: torch.Tensor, repeat: int) -> float:  # type: ignore[no-untyped-def]
    fn(x)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--ffn", type=int, default=1024)
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    fixed = fix_source(BLOCK, "hit_list.py", unsafe=True)
    if not any(f.title.startswith("Dispatch to every expert") for f in fixed.applied):
        raise SystemExit("the MoE fixer did not rewrite the block")
    torch.manual_seed(0)
    x = torch.randn(1, args.tokens, args.hidden)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; tokens {args.tokens}, hidden {args.hidden}, ffn {args.ffn}, experts {args.experts}, top-k {args.top_k}")
    results = {}
    for name, source in (("original", BLOCK), ("rewritten", fixed.fixed)):
        torch.manual_seed(1)
        block = load(source, f"moe_{name}").SparseMoe(args.hidden, args.experts, args.top_k, args.ffn).eval()
        with torch.no_grad():
            eager = median_ms(block, x, args.repeat)
            torch._dynamo.reset()
            compiled = torch.compile(block)
            start = time.perf_counter()
            out = compiled(x)
            cold = time.perf_counter() - start
            steady = median_ms(compiled, x, args.repeat)
        results[name] = out[0]  # (hidden states, router logits)
        print(f"{name:>9}: eager {eager:8.2f} ms   compiled cold {cold:6.1f} s   compiled steady {steady:8.2f} ms")
    diff = (results["original"] - results["rewritten"]).abs().max().item()
    print(f"max abs difference of the outputs: {diff:.2g} (largest value {results['original'].abs().max().item():.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
