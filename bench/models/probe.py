"""One model, one transformers variant, in its own process (run by run.py with a timeout).

    probe.py breaks MODEL_TYPE STATE_DIR   graphs and break sites (counting backend + graph_breaks
                                           log), the lines an eager call runs, the eager outputs
    probe.py speed  MODEL_TYPE STATE_DIR   cold-start and steady-state latency, eager and inductor

The first run for a model (the original variant) saves the weights and inputs in STATE_DIR; the
fixed variants load them, so outputs are compared on the same weights and inputs. Prints one JSON
line.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from probe_record import break_record
from recipes import input_options, small_config


def build(model_type: str, state: Path) -> tuple[Any, dict[str, Any]]:
    import torch
    from transformers import AutoModel

    config = small_config(model_type)
    torch.manual_seed(0)
    model = AutoModel.from_config(config).eval()
    weights, inputs_file = state / "weights.pt", state / "inputs.pt"
    if weights.is_file():
        model.load_state_dict(torch.load(weights, weights_only=True))
        inputs = torch.load(inputs_file, weights_only=True)
    else:
        inputs = _first_that_runs(model, input_options(model, config))
        state.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), weights)
        torch.save(inputs, inputs_file)
    return model, inputs


def _first_that_runs(model: Any, options: list[dict[str, Any]]) -> dict[str, Any]:
    import torch

    for number, inputs in enumerate(options):
        try:
            with torch.no_grad():
                model(**inputs)
            return inputs
        except Exception:
            if number == len(options) - 1:
                raise
    raise ValueError("no inputs")


def tensors(value: Any) -> list[Any]:
    """The tensors of a model output, in a fixed order (ModelOutput, tuples, dicts)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if hasattr(value, "to_tuple"):
        value = value.to_tuple()
    if isinstance(value, dict):
        return [t for key in sorted(value) for t in tensors(value[key])]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors(item)]
    return []


def breaks(model_type: str, state: Path) -> dict[str, Any]:
    import torch
    import transformers
    from graphmend.runtime.worker import capture, covered_lines

    package = Path(transformers.__file__).resolve().parent
    model, inputs = build(model_type, state)
    with torch.no_grad():
        torch.manual_seed(2)  # models that sample (VITS' noise, dropout-like paths) draw the same numbers in every variant
        eager = model(**inputs)
        torch.save([t.detach() for t in tensors(eager)], state / f"outputs-{os.environ['GRAPHMEND_VARIANT']}.pt")
        result = capture(model, (), inputs)
        coverage = covered_lines(model, (), inputs, str(package)) if result["error"] is None else {}
    return {"transformers": transformers.__version__, **break_record(result, coverage, package)}


def speed(model_type: str, state: Path, repeats: int = 20) -> dict[str, Any]:
    import torch

    model, inputs = build(model_type, state)
    with torch.no_grad():
        eager = []
        for _ in range(repeats):
            started = time.perf_counter()
            model(**inputs)
            eager.append(time.perf_counter() - started)
        torch._dynamo.reset()
        compiled = torch.compile(model)
        started = time.perf_counter()
        compiled(**inputs)
        cold = time.perf_counter() - started
        steady = []
        for _ in range(repeats + 3):
            started = time.perf_counter()
            compiled(**inputs)
            steady.append(time.perf_counter() - started)
    return {
        "eager_s": statistics.median(eager),
        "cold_s": cold,
        "steady_s": statistics.median(steady[3:]),
        "threads": torch.get_num_threads(),
    }


def main() -> int:
    warnings.filterwarnings("ignore")
    mode, model_type, state = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    with contextlib.redirect_stdout(io.StringIO()):  # models and dynamo may print
        try:
            result = {"ok": True, **(breaks(model_type, state) if mode == "breaks" else speed(model_type, state))}
        except Exception as exc:
            result = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
