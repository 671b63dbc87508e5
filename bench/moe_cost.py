"""What each fixed form of a mixture-of-experts dispatch costs against the original, at real sizes.

The block is transformers 4.57.6's own `Qwen3MoeSparseMoeBlock` (a loop over the experts hit, with
data-dependent gathers), lifted out of its modeling file with its expert MLP into a standalone
module, and rewritten by the real fixer at each level, so this measures the code the tool writes:

- `original`: the block as shipped (dynamo breaks in the dispatch loop);
- `costly`: `graphmend fix --fix-level costly`, every expert on every token, unrouted rows masked;
- `unsafe`: `graphmend fix --fix-level unsafe`, every expert on its own tokens, with
  `capture_dynamic_output_shape_ops` set by the module.

    .venv/bin/python bench/moe_cost.py [--experts 8 64 128] [--tokens 8 512 4096] [--dtype float32]
    .venv/bin/python bench/moe_cost.py --prepare DIR      # write the three forms, then on a GPU machine:
    python3 bench/moe_cost.py --forms-from DIR --device cuda   # needs only torch there (no libcst, no transformers)

Each (form, experts, tokens) runs in its own process (the unsafe form's flag is process-wide):
graphs under a counting backend, then inductor: cold start (first call, fresh inductor cache) and
steady state (median of repeated calls, synchronised on CUDA), and the largest difference from the
original's eager output (compiled, and the fixed form run eagerly: the rewrite alone), next to the
original's own batch-composition noise (the same tokens run beside others, eagerly): the noise floor.
Prints a Markdown table. The modeling file comes from transformers 4.57.6 (`--modeling`; by default
the copy `bench/models/run.py --transformers 4.57.6` installs under .cache/).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELING = ROOT / ".cache" / "bench" / "transformers-4.57.6" / "site" / "transformers" / "models" / "qwen3_moe" / "modeling_qwen3_moe.py"
FORMS = ("original", "costly", "unsafe")
TOP_K = {8: 2}  # experts -> top-k; the rest use 8, as Qwen3-MoE does
BLOCK_CLASSES = ("Qwen3MoeMLP", "Qwen3MoeSparseMoeBlock")
STANDALONE_HEADER = '''"""transformers 4.57.6's Qwen3MoeSparseMoeBlock and its expert MLP, lifted out for bench/moe_cost.py."""
import torch
import torch.nn.functional as F
from torch import nn

ACT2FN = {"silu": nn.SiLU()}
'''


def standalone_block(modeling: Path) -> str:
    """The block's classes as one module that imports only torch: runs where transformers 4.57.6 cannot."""
    source = modeling.read_text(encoding="utf-8")
    tree = ast.parse(source)
    classes = {node.name: ast.get_source_segment(source, node) for node in tree.body if isinstance(node, ast.ClassDef)}
    missing = [name for name in BLOCK_CLASSES if name not in classes]
    if missing:
        raise SystemExit(f"{modeling} has no {', '.join(missing)}: not transformers 4.57.6's qwen3_moe?")
    return STANDALONE_HEADER + "".join(f"\n\n{classes[name]}\n" for name in BLOCK_CLASSES)


def prepare(modeling: Path, out: Path) -> None:
    """Writes original.py, costly.py and unsafe.py: the fixes are applied here, where libcst is."""
    sys.path.insert(0, str(ROOT / "server"))
    from graphmend.rewrite import fix_source
    from graphmend.rewrite.model import Safety

    out.mkdir(parents=True, exist_ok=True)
    original = standalone_block(modeling)
    (out / "original.py").write_text(original, encoding="utf-8")
    for form in FORMS[1:]:
        result = fix_source(original, str(out / f"{form}.py"), level=Safety(form))
        titles = [f.title for f in result.applied if "expert" in f.title]
        if not titles:
            raise SystemExit(f"no MoE fix at level {form}: {[f.title for f in result.applied]}")
        (out / f"{form}.py").write_text(result.fixed, encoding="utf-8")
        print(f"{form}: {titles[0]}")


def _load(path: Path, name: str):  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _run_one(forms: Path, form: str, experts: int, tokens: int, dtype: str, repeat: int, device: str) -> dict:
    """Runs in a fresh process: builds the block, counts graphs, times inductor."""
    import statistics
    import time
    from types import SimpleNamespace

    import torch
    import torch._dynamo.testing

    shipped = _load(forms / "original.py", "moe_original")
    module = shipped if form == "original" else _load(forms / f"{form}.py", f"moe_{form}")
    config = SimpleNamespace(
        hidden_size=256, moe_intermediate_size=128, intermediate_size=128, num_experts=experts,
        num_experts_per_tok=TOP_K.get(experts, 8), norm_topk_prob=True, hidden_act="silu",
    )
    torch_dtype = getattr(torch, dtype)
    torch.manual_seed(0)
    reference_block = shipped.Qwen3MoeSparseMoeBlock(config).eval().to(device=device, dtype=torch_dtype)
    torch.manual_seed(0)
    block = module.Qwen3MoeSparseMoeBlock(config).eval().to(device=device, dtype=torch_dtype)
    torch.manual_seed(1)
    x = torch.randn(1, tokens, 256, dtype=torch_dtype).to(device)

    def synchronise() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    with torch.no_grad():
        reference = reference_block(x)[0]
        # the original's own noise: the same tokens in a larger batch (each expert's matmul sees other rows)
        others = torch.randn(1, max(tokens, 8), 256, dtype=torch_dtype).to(device)
        in_batch = reference_block(torch.cat([x, others], dim=1))[0][:, :tokens]
        batch_noise = (in_batch.float() - reference.float()).abs().max().item()
        eager_difference = (block(x)[0].float() - reference.float()).abs().max().item()  # the rewrite alone, no inductor
        counter = torch._dynamo.testing.CompileCounter()
        torch._dynamo.reset()
        torch.compile(block, backend=counter)(x)
        graphs = counter.frame_count
        torch._dynamo.reset()
        compiled = torch.compile(block)
        synchronise()
        start = time.perf_counter()
        out = compiled(x)[0]
        synchronise()
        cold = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            compiled(x)
            synchronise()
            times.append(time.perf_counter() - start)
    difference = (out.float() - reference.float()).abs()
    scale = reference.float().abs().max().item() or 1.0
    return {
        "graphs": graphs, "cold_s": cold, "steady_ms": statistics.median(times) * 1000,
        "max_abs": difference.max().item(), "max_rel": difference.max().item() / scale,
        "batch_noise_rel": batch_noise / scale,
        "eager_rel": eager_difference / scale,
    }


def _describe_device(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return f"torch {torch.__version__}, {torch.cuda.get_device_name(device)}"
    return f"torch {torch.__version__}, CPU, {torch.get_num_threads()} threads"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experts", type=int, nargs="+", default=[8, 64, 128])
    parser.add_argument("--tokens", type=int, nargs="+", default=[8, 512, 4096])
    parser.add_argument("--forms", nargs="+", choices=FORMS, default=list(FORMS))
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per measurement")
    parser.add_argument("--modeling", type=Path, default=MODELING, help="transformers 4.57.6's modeling_qwen3_moe.py")
    parser.add_argument("--prepare", type=Path, metavar="DIR", help="write the three forms into DIR and stop")
    parser.add_argument("--forms-from", type=Path, metavar="DIR", help="forms written by --prepare (no fixing here)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: form,experts,tokens in this process
    args = parser.parse_args()
    if args.one:
        form, experts, tokens = args.one.split(",")
        print(json.dumps(_run_one(args.forms_from, form, int(experts), int(tokens), args.dtype, args.repeat, args.device)))
        return 0
    if args.prepare or not args.forms_from:
        if not args.modeling.is_file():
            raise SystemExit(f"{args.modeling} is missing: run bench/models/run.py --transformers 4.57.6, or pass --modeling")
        forms = args.prepare or Path(tempfile.mkdtemp(prefix="moe-forms-"))
        prepare(args.modeling, forms)
        if args.prepare:
            return 0
    else:
        forms = args.forms_from

    print(f"{_describe_device(args.device)}, {args.dtype}; Qwen3MoeSparseMoeBlock (transformers 4.57.6), hidden 256, expert FFN 128\n")
    print("| experts | top-k | tokens | form | graphs | cold s | steady ms | vs original | max abs diff | max rel diff | eager rel diff | original's batch noise (rel) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for experts in args.experts:
        for tokens in args.tokens:
            base = None
            for form in args.forms:
                command = [sys.executable, __file__, "--one", f"{form},{experts},{tokens}", "--forms-from", str(forms),
                           "--dtype", args.dtype, "--repeat", str(args.repeat), "--device", args.device]
                # cold start means cold: a fresh inductor cache for every measurement
                env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="moe-inductor-"),
                       "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
                row: dict
                try:
                    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=env)
                    lines = done.stdout.strip().splitlines()
                    row = json.loads(lines[-1]) if done.returncode == 0 and lines else {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:120]}
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
