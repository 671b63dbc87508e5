"""Recall spot check on real models: does the static analysis predict every break dynamo makes?

    .venv/bin/python bench/recall_spot_check.py [model_type ...]

Builds each transformers model type from its default config shrunk to a few layers (random
weights, nothing downloaded), runs one forward pass under `torch.compile` with the graph-counting
backend and the graph_breaks log (runtime/worker.py), maps each break to its innermost frame inside
the transformers package, and checks that `analyze()` reports a finding whose span covers that
line. Prints one line per break site (OK / MISS, with the finding's effect) and a summary. The
full per-model benchmark with fixes and speed-ups is bench/models/ (issue 7); this is the quick
check used while developing the analyser.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend import analyze  # noqa: E402
from graphmend.runtime.worker import capture  # noqa: E402

DEFAULT_MODELS = ["gpt2", "opt", "bart", "roberta", "distilbert", "gpt_neox", "phi", "gemma", "qwen2", "mistral", "bloom", "mpt", "deberta", "deberta-v2", "electra", "albert", "switch_transformers", "nllb-moe", "dbrx", "jetmoe", "granitemoe", "olmoe", "phimoe", "jamba", "rwkv", "longt5", "bigbird_pegasus", "pegasus", "qwen3_moe", "gpt_oss", "minimax", "gemma3_text", "mbart", "m2m_100", "xglm", "mixtral", "qwen2_moe", "longformer", "big_bird", "llama", "bert"]
SMALL = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
    vocab_size=128, max_position_embeddings=64, head_dim=16, num_local_experts=4, num_experts=4,
    num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=32,
)


def check(model_type: str, package: str) -> tuple[list[tuple[str, int, str, bool, str | None]], str]:
    import torch
    from transformers import AutoConfig, AutoModel

    try:
        config = AutoConfig.for_model(model_type)
        for key, value in SMALL.items():
            if hasattr(config, key):
                setattr(config, key, value)
        torch.manual_seed(0)
        model = AutoModel.from_config(config).eval()
    except Exception as exc:
        return [], f"not built ({type(exc).__name__}: {str(exc)[:80]})"
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, :2] = 0
    kwargs = {"input_ids": ids, "attention_mask": mask}
    if getattr(config, "is_encoder_decoder", False):
        kwargs["decoder_input_ids"] = torch.randint(0, 100, (2, 4))
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
        result = capture(model, (), kwargs)
    sites = set()
    for record in result["breaks"]:
        frames = [f for f in record["stack"] if f["file"].startswith(package)]
        frame = frames[-1] if frames else {"file": record["file"], "line": record["line"]}
        sites.add((frame["file"], frame["line"], record["summary"][:60], record["frame_skip"]))
    covered: dict[tuple[str, int], str] = {}
    for path in {s[0] for s in sites if s[0].startswith(package)}:
        for finding in analyze(Path(path).read_text(encoding="utf-8"), path):
            for line in range(finding.span.start_line, finding.span.end_line + 1):
                covered.setdefault((path, line), f"{finding.code} {finding.effect}")
    rows = [
        (os.path.relpath(path, package), line, why, skipped, covered.get((path, line)))
        for path, line, why, skipped in sorted(sites)
    ]
    status = f"{result['graphs']} graphs" + (f", run ended with {result['error'][:60]}" if result["error"] else "")
    return rows, status


def main() -> int:
    warnings.filterwarnings("ignore")
    import transformers

    package = os.path.dirname(transformers.__file__)
    models = sys.argv[1:] or DEFAULT_MODELS
    sites = predicted = in_model = in_model_predicted = breaking = 0
    for model_type in models:
        rows, status = check(model_type, package)
        print(f"== {model_type}: {status}")
        breaking += bool(rows)
        for path, line, why, skipped, finding in rows:
            print(f"   {'OK  ' if finding else 'MISS'} {path}:{line} {why}{' [frame skipped]' if skipped else ''} -> {finding or '-'}")
        distinct = {(r[0], r[1]) for r in rows}
        hits = {(r[0], r[1]) for r in rows if r[4]}
        sites += len(distinct)
        predicted += len(hits)
        in_model += len({d for d in distinct if d[0].startswith("models/")})
        in_model_predicted += len({h for h in hits if h[0].startswith("models/")})
    print(
        f"\n{len(models)} model types, {breaking} with breaks: {predicted}/{sites} break sites predicted; "
        f"{in_model_predicted}/{in_model} inside modeling files (transformers {transformers.__version__})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
