"""What each fixed form of a mixture-of-experts dispatch costs against the original, at real sizes.

The block is transformers 4.57.6's own `Qwen3MoeSparseMoeBlock` (a loop over the experts hit, with
data-dependent gathers). Its file is rewritten by the real fixer at each level, so this measures
the code the tool writes:

- `original`: the block as shipped (dynamo breaks in the dispatch loop);
- `costly`: `graphmend fix --fix-level costly`, every expert on every token, unrouted rows masked;
- `unsafe`: `graphmend fix --fix-level unsafe`, every expert on its own tokens, with
  `capture_dynamic_output_shape_ops` set by the module.

    .venv/bin/python bench/moe_cost.py [--experts 8 64 128] [--tokens 8 512 4096] [--dtype float32]

Each (form, experts, tokens) runs in its own process (the unsafe form's flag is process-wide):
graphs under a counting backend, then inductor on CPU: cold start (first call) and steady state
(median of repeated calls), and the largest difference from the original's eager output (compiled,
and the fixed form run eagerly: the rewrite alone), next to
the original's own compiled-vs-eager difference and its batch-composition noise (the same tokens
run beside others, eagerly): the noise floor. Prints a Markdown table.
Needs transformers 4.57.6 (`bench/models/run.py --transformers 4.57.6` installs it under .cache/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / ".cache" / "bench" / "transformers-4.57.6" / "site"
FORMS = ("original", "costly", "unsafe")
TOP_K = {8: 2}  # experts -> top-k; the rest use 8, as Qwen3-MoE does


def _run_one(form: str, experts: int, tokens: int, dtype: str, repeat: int) -> dict:
    """Runs in a fresh process: builds the block, counts graphs, times inductor."""
    import importlib.util
    import statistics
    import tempfile
    import time

    import torch
    import torch._dynamo.testing

    sys.path.insert(0, str(ROOT / "server"))
    sys.path.insert(0, str(SITE))
    from graphmend.rewrite import fix_source
    from graphmend.rewrite.model import Safety
    from transformers import Qwen3MoeConfig
    from transformers.models.qwen3_moe import modeling_qwen3_moe as shipped

    module = shipped
    if form != "original":
        source = Path(shipped.__file__).read_text(encoding="utf-8")
        result = fix_source(source, shipped.__file__, level=Safety(form))
        titles = [f.title for f in result.applied if "expert" in f.title]
        if not titles:
            return {"error": f"no MoE fix at level {form}"}
        path = Path(tempfile.mkdtemp()) / "modeling_qwen3_moe_fixed.py"
        path.write_text(result.fixed, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("transformers.models.qwen3_moe.modeling_qwen3_moe_fixed", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[spec.name] = module  # type: ignore[union-attr]  # transformers inspects its classes' files
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    config = Qwen3MoeConfig(
        hidden_size=256, moe_intermediate_size=128, num_experts=experts,
        num_experts_per_tok=TOP_K.get(experts, 8), norm_topk_prob=True,
    )
    torch_dtype = getattr(torch, dtype)
    torch.manual_seed(0)
    reference_block = shipped.Qwen3MoeSparseMoeBlock(config).eval().to(torch_dtype)
    torch.manual_seed(0)
    block = module.Qwen3MoeSparseMoeBlock(config).eval().to(torch_dtype)
    torch.manual_seed(1)
    x = torch.randn(1, tokens, 256, dtype=torch_dtype)
    with torch.no_grad():
        reference = reference_block(x)[0]
        # the original's own noise: the same tokens in a larger batch (each expert's matmul sees other rows)
        others = torch.randn(1, max(tokens, 8), 256, dtype=torch_dtype)
        in_batch = reference_block(torch.cat([x, others], dim=1))[0][:, :tokens]
        batch_noise = (in_batch.float() - reference.float()).abs().max().item()
        eager_difference = (block(x)[0].float() - reference.float()).abs().max().item()  # the rewrite alone, no inductor
        counter = torch._dynamo.testing.CompileCounter()
        torch._dynamo.reset()
        torch.compile(block, backend=counter)(x)
        graphs = counter.frame_count
        torch._dynamo.reset()
        compiled = torch.compile(block)
        start = time.perf_counter()
        out = compiled(x)[0]
        cold = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            compiled(x)
            times.append(time.perf_counter() - start)
    difference = (out.float() - reference.float()).abs()
    scale = reference.float().abs().max().item() or 1.0
    return {
        "graphs": graphs, "cold_s": cold, "steady_ms": statistics.median(times) * 1000,
        "max_abs": difference.max().item(), "max_rel": difference.max().item() / scale,
        "batch_noise_rel": batch_noise / scale,
        "eager_rel": eager_difference / scale,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experts", type=int, nargs="+", default=[8, 64, 128])
    parser.add_argument("--tokens", type=int, nargs="+", default=[8, 512, 4096])
    parser.add_argument("--forms", nargs="+", choices=FORMS, default=list(FORMS))
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per measurement")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: form,experts,tokens in this process
    args = parser.parse_args()
    if args.one:
        form, experts, tokens = args.one.split(",")
        print(json.dumps(_run_one(form, int(experts), int(tokens), args.dtype, args.repeat)))
        return 0
    if not SITE.is_dir():
        raise SystemExit(f"transformers 4.57.6 is not installed under {SITE}: run bench/models/run.py --transformers 4.57.6 first")
    import torch

    print(f"torch {torch.__version__}, CPU, {torch.get_num_threads()} threads, {args.dtype}; Qwen3MoeSparseMoeBlock, hidden 256, expert FFN 128\n")
    print("| experts | top-k | tokens | form | graphs | cold s | steady ms | vs original | max abs diff | max rel diff | eager rel diff | original's batch noise (rel) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for experts in args.experts:
        for tokens in args.tokens:
            base = None
            for form in args.forms:
                command = [sys.executable, __file__, "--one", f"{form},{experts},{tokens}", "--dtype", args.dtype, "--repeat", str(args.repeat)]
                # cold start means cold: a fresh inductor cache for every measurement
                env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="moe-inductor-"),
                       "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
                try:
                    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=env)
                    lines = done.stdout.strip().splitlines()
                    row = json.loads(lines[-1]) if done.returncode == 0 and lines else {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:80]}
                except subprocess.TimeoutExpired:
                    row = {"error": f"timeout after {args.timeout} s"}
                head = f"| {experts} | {TOP_K.get(experts, 8)} | {tokens} | {form} |"
                if "error" in row:
                    print(f"{head} failed: {row['error']} | | | | | | | |", flush=True)
                    continue
                base = row["steady_ms"] if form == "original" else base
                ratio = f"{row['steady_ms'] / base:.2f}x" if base else "-"
                print(
                    f"{head} {row['graphs']} | {row['cold_s']:.1f} | {row['steady_ms']:.2f} | {ratio} | "
                    f"{row['max_abs']:.2g} | {row['max_rel']:.2g} | {row['eager_rel']:.2g} | {row['batch_noise_rel']:.2g} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
