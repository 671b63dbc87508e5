"""The real-model benchmark's bookkeeping (bench/models): output comparison and the totals the
report claims, on synthetic runs whose right answers are known by construction."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench" / "models"))

from report import totals, write_reports
from run import outputs_equal


def _save(state: Path, variant: str, tensors: list[torch.Tensor]) -> None:
    torch.save(tensors, state / f"outputs-{variant}.pt")


def test_outputs_are_identical_allclose_or_different(tmp_path: Path) -> None:
    base = [torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.tensor([1, 2])]
    _save(tmp_path, "original", base)
    _save(tmp_path, "same", [t.clone() for t in base])
    _save(tmp_path, "close", [base[0] + 1e-9, base[1]])
    _save(tmp_path, "off", [base[0] + 1e-3, base[1]])
    _save(tmp_path, "short", base[:1])
    assert outputs_equal(tmp_path, "same") == "identical"
    assert outputs_equal(tmp_path, "close") == "allclose"
    assert outputs_equal(tmp_path, "off") == "DIFFERENT (max abs diff 0.001, largest value 5)"
    assert outputs_equal(tmp_path, "short") == "DIFFERENT (structure)"
    assert outputs_equal(tmp_path, "never-run") == "missing"


def _record(sites: list[tuple[str, int]], graphs: int = 1) -> dict:
    return {"ok": True, "error": None, "graphs": graphs, "breaks": [{"path": path, "line": line} for path, line in sites]}


ROWS = [
    {"model": "clean", "original": _record([])},
    {"model": "unbuildable", "original": {"ok": False, "error": "ValueError: no small config"}},
    {
        "model": "moe",
        "original": _record([("models/moe/m.py", 10), ("models/moe/m.py", 20), ("utils/generic.py", 5)], graphs=4),
        "static": {"sites": 3, "predicted": 2, "missed": ["utils/generic.py:5"], "findings_ran": 4, "findings_confirmed": 2},
        "safe": _record([("models/moe/m.py", 20), ("utils/generic.py", 5)]),
        "unsafe": _record([("utils/generic.py", 5)]),
        "safe_equal": "identical",
        "unsafe_equal": "DIFFERENT",
    },
    {
        "model": "gpt",
        "original": _record([("models/gpt/m.py", 3)], graphs=2),
        "static": {"sites": 1, "predicted": 1, "missed": [], "findings_ran": 1, "findings_confirmed": 1},
        "safe": _record([]),
        "unsafe": {"ok": False, "error": "timeout after 300 s"},
        "safe_equal": "allclose",
        "unsafe_equal": "not run",
    },
]


def test_totals_count_sites_removals_and_changed_outputs() -> None:
    t = totals(ROWS)
    assert (t["types"], t["ran"], t["breaking"]) == (4, 3, 2)
    assert t["before"] == 4 and t["after"] == {"safe": 2, "unsafe": 2}  # a failed run removes nothing
    assert t["failed"] == {"safe": [], "unsafe": ["gpt"]}
    assert t["changed"] == {"safe": [], "unsafe": ["moe"]}
    assert (t["predicted"], t["sites"], t["findings_confirmed"], t["findings_ran"]) == (3, 4, 3, 5)


def test_the_markdown_report_states_the_totals(tmp_path: Path) -> None:
    path = tmp_path / "models-transformers-0.0.json"
    path.write_text(json.dumps({"transformers": "0.0", "rows": ROWS}), encoding="utf-8")
    write_reports(path)
    text = path.with_suffix(".md").read_text(encoding="utf-8")
    assert "4 model types; 3 built small and ran; **2 break**" in text
    assert "| after `graphmend fix` | 2 | 2 (50%) |" in text
    assert "| moe | 4 | 3 → 2 → 1 | 2/3 | identical | DIFFERENT |" in text
    assert "| after `graphmend fix --fix-level unsafe` | 2 | 2 (50%) |" in text and "unsafe ['gpt']" in text
    assert "Static recall (break sites a finding covers): 3/4 (75%)" in text
    assert "- moe: utils/generic.py:5" in text
    assert "1 × ValueError: no small config" in text


def test_a_variant_timed_before_the_fixers_changed_shows_no_ratio() -> None:
    """`--refix` drops a variant's old timing: the report shows "-" for it, not "fails"."""
    from report import _ratio

    speed = {"original": {"ok": True, "cold_s": 2.0, "steady_s": 0.3}, "safe": {"ok": True, "cold_s": 1.0, "steady_s": 0.3}}
    assert _ratio(speed, "unsafe", "cold_s") == "-"
    assert _ratio(speed, "safe", "cold_s") == "2.00x"
    assert _ratio({**speed, "unsafe": {"ok": False, "error": "GuardOnDataDependentSymNode"}}, "unsafe", "steady_s") == "fails"


def test_shrinking_keeps_per_stage_lists() -> None:
    """Swin-like configs list heads per stage: an int in their place broke 12 model types."""
    from types import SimpleNamespace

    from recipes import _shrink

    config = SimpleNamespace(num_heads=[3, 6, 12], hidden_size=768, num_layers=12)
    _shrink(config)
    assert config.num_heads == [3, 6, 12] and config.hidden_size == 32 and config.num_layers == 2


def test_audio_inputs_fit_the_encoder_and_pad_one_example() -> None:
    from types import SimpleNamespace

    from recipes import _audio_options

    whisper_like = SimpleNamespace(num_mel_bins=80, max_source_positions=32, is_encoder_decoder=True, vocab_size=50)
    options = _audio_options("input_features", whisper_like)
    first = options[0]
    assert first["input_features"].shape == (2, 80, 64)  # mel bins first, 2 x max_source_positions frames
    assert options[2]["input_features"].shape == (2, 64, 80)  # time first (Speech2Text-like)
    assert first["attention_mask"].shape == (2, 64) and first["attention_mask"][1].sum() < 64 and first["attention_mask"][0].all()
    assert first["decoder_input_ids"].max() < 50 and "attention_mask" not in options[1]
    waveform = _audio_options("input_values", SimpleNamespace())
    assert waveform[0]["input_values"].shape == (2, 3200) and waveform[2]["input_values"].shape == (2, 1, 3200)
