"""Vision-language models of a transformers release, called with an image, before and after `graphmend fix`.

    .venv/bin/python bench/vlm_images.py PACKAGE_DIR [--models llava aya_vision ...] [--jobs 2]

PACKAGE_DIR is an unpacked `transformers` package (`pip download --no-deps transformers==4.57.6`,
unzip, then `<dir>/transformers`); its dependencies come from this environment. The models bench
(bench/models) calls these models with text only when random ids hold the wrong number of image
tokens, so their placeholder check (`get_placeholder_mask`: `if inputs_embeds[mask].numel() !=
image_features.numel(): raise ValueError(...)`) never runs there. Here each model type whose
modeling file has that check is built small with random weights (bench/models/recipes.py), asked
how many image features one image gives (`get_image_features`), and called with ids holding
exactly that many image tokens. The fixed variant is a copy of the package with `graphmend fix`
(the safe tier) applied to the model's own folder. Each variant runs in its own process: graphs
and break sites (counting backend + graph_breaks log), the eager output, and whether one image
token too many still raises the same ValueError eagerly and compiled, and whether inductor compiles the
model (its output allclose to eager).

Prints one row per model and the totals; model types that do not build or run small are listed
with their error.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "special_image_mask].numel()"


def vlm_types(package: Path) -> list[str]:
    """Model types whose modeling file compares the count of image-token elements with the features."""
    found = []
    for path in sorted((package / "models").glob("*/modeling_*.py")):
        if MARKER in path.read_text(encoding="utf-8", errors="replace"):
            found.append(path.parent.name)
    return sorted(set(found))


def fixed_copy(package: Path, models: list[str], into: Path) -> Path:
    """A copy of the package with `graphmend fix` applied to the models' folders."""
    target = into / "transformers"
    shutil.copytree(package, target)
    script = Path(sys.executable).with_name("graphmend")
    paths = [str(target / "models" / name) for name in models]
    subprocess.run([str(script), "fix", *paths, "--exit-zero", "--quiet"], check=True, capture_output=True, text=True)
    return into


def probe(model_type: str, root: Path, state: Path, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(ROOT / "server"), str(ROOT / "bench" / "models")])}
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--probe", model_type, str(state)], capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:200]}
    return json.loads(lines[-1])


def run_probe(model_type: str, state: Path) -> None:
    """In the variant's process: build, call eagerly and compiled, print one JSON line."""
    import torch
    import transformers
    from graphmend.runtime.worker import capture
    from probe_record import break_record
    from recipes import small_config
    from transformers import AutoModelForImageTextToText

    package = Path(transformers.__file__).resolve().parent
    config = small_config(model_type)
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_config(config).eval()
    inputs_file = state / "inputs.pt"
    if inputs_file.is_file():
        model.load_state_dict(torch.load(state / "weights.pt", weights_only=True))
        inputs = torch.load(inputs_file, weights_only=True)
    else:
        inputs = _image_inputs(model, config)
        state.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), state / "weights.pt")
        torch.save(inputs, inputs_file)
    with torch.no_grad():
        eager = model(**inputs).logits
        variant = "fixed" if (state / "outputs-original.pt").is_file() else "original"
        torch.save(eager, state / f"outputs-{variant}.pt")
        result = capture(model, (), inputs)
        token = _image_token(config)
        bad = dict(inputs, input_ids=inputs["input_ids"].clone())
        bad["input_ids"][0, -1] = token  # one image token too many
        errors = []
        for run in (model, torch.compile(model, backend="eager")):
            torch._dynamo.reset()
            try:
                run(**bad)
                errors.append(None)
            except ValueError as error:
                errors.append(str(error))
        torch._dynamo.reset()
        try:
            inductor = "allclose" if torch.allclose(torch.compile(model)(**inputs).logits, eager, atol=1e-5) else "DIFFERS"
        except Exception as error:  # a failure to compile is what this column reports
            inductor = f"FAILS: {type(error).__name__}"
    record = break_record(result, {}, package)
    record.pop("coverage")
    equal = torch.equal(torch.load(state / "outputs-original.pt"), eager)
    print(json.dumps({**record, "equal": equal, "mismatch_raises": errors[0] is not None and errors[0] == errors[1], "inductor": inductor}))


def _image_token(config) -> int:  # type: ignore[no-untyped-def]
    for key in ("image_token_id", "image_token_index"):
        value = getattr(config, key, None)
        if isinstance(value, int):
            return value
    raise ValueError("no image token id in the config")


def _image_inputs(model, config) -> dict:  # type: ignore[no-untyped-def]
    """One image at the vision tower's size and ids holding as many image tokens as it gives features."""
    import torch
    from recipes import _pixels

    generator = torch.Generator().manual_seed(1)
    pixels = _pixels(config, generator)["pixel_values"][:1]
    extra = _image_arguments(model, config, pixels)
    with torch.no_grad():
        features = model.get_image_features(pixel_values=pixels, **extra)
    if isinstance(features, (list, tuple)):
        features = torch.cat([f.reshape(-1, f.shape[-1]) for f in features])
    count = features.numel() // features.shape[-1]
    token = _image_token(config)
    vocab = int(getattr(getattr(config, "text_config", config), "vocab_size", 100))
    ids = torch.randint(0, min(vocab, 100), (1, count + 6), generator=generator)
    ids[ids == token] = (token + 1) % min(vocab, 100)
    ids[0, 2 : 2 + count] = token
    forward = inspect.signature(model.forward).parameters
    kept = {key: value for key, value in extra.items() if key in forward and isinstance(value, torch.Tensor)}
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "pixel_values": pixels, **kept}


def _image_arguments(model, config, pixels) -> dict:  # type: ignore[no-untyped-def]
    """What `get_image_features` requires besides the pixels, from the config and the image's size
    (`image_sizes` of LLaVA-NeXT-like models, the feature layer and selection strategy)."""
    import torch

    arguments = {}
    for name, parameter in inspect.signature(model.get_image_features).parameters.items():
        if parameter.default is not inspect.Parameter.empty or name in ("pixel_values", "kwargs"):
            continue
        if name == "image_sizes":
            arguments[name] = torch.tensor([[pixels.shape[-2], pixels.shape[-1]]])
        elif hasattr(config, name):
            arguments[name] = getattr(config, name)
    return arguments


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", nargs="?", help="an unpacked transformers package folder")
    parser.add_argument("--models", nargs="*", help="model types (default: every one with the placeholder check)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        run_probe(args.probe[0], Path(args.probe[1]))
        return 0
    package = Path(args.package).resolve()
    models = args.models or vlm_types(package)
    with tempfile.TemporaryDirectory(prefix="gm-vlm-") as scratch:
        fixed = fixed_copy(package, models, Path(scratch) / "fixed")

        def one(model_type: str) -> dict:
            state = Path(scratch) / "state" / model_type
            before = probe(model_type, package.parent, state, args.timeout)
            after = probe(model_type, fixed, state, args.timeout) if before.get("graphs") else {}
            return {"model": model_type, "original": before, "fixed": after}

        with ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(one, models))
    ran = [r for r in rows if r["original"].get("graphs") and r["fixed"].get("graphs")]
    print(f"{'model':<28} {'graphs':>9} {'breaks':>9}  output   mismatch raises  inductor (fixed)")
    for row in ran:
        a, b = row["original"], row["fixed"]
        print(
            f"{row['model']:<28} {a['graphs']:>4} -> {b['graphs']:<2} {len(a['breaks']):>4} -> {len(b['breaks']):<2}  "
            f"{'equal' if b['equal'] else 'DIFFERS':<8} {'same' if b['mismatch_raises'] and a['mismatch_raises'] else 'NO':<16} {b['inductor']}"
        )
    sites_before = sum(len(r["original"]["breaks"]) for r in ran)
    sites_after = sum(len(r["fixed"]["breaks"]) for r in ran)
    placeholder = sum(1 for r in ran for s in r["original"]["breaks"] if ".numel()" in _line(package, s))
    print(f"\n{len(ran)} of {len(models)} model types ran with an image; break sites {sites_before} -> {sites_after}; "
          f"at the placeholder check before: {placeholder}; outputs equal: {sum(r['fixed']['equal'] for r in ran)}/{len(ran)}; "
          f"mismatch raises the same ValueError: {sum(bool(r['fixed']['mismatch_raises']) for r in ran)}/{len(ran)}")
    for row in rows:
        if row not in ran:
            print(f"  not run: {row['model']}: {row['original'].get('error') or row['fixed'].get('error')}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


def _line(package: Path, site: dict) -> str:
    """The source line of a break site in the original package."""
    path = package / site["path"]
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return lines[site["line"] - 1] if 0 < site["line"] <= len(lines) else ""


if __name__ == "__main__":
    sys.exit(main())
