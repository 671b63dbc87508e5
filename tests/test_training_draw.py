"""The training-draw fix keeps the random state: after the fixed module runs, NumPy's and Python's
generators are where the original left them, in eval (where the draw became an ordered op whose
value is dropped) and in training (where it draws as before), eagerly and compiled, inductor
included. test_fixes.py checks the fixtures' outputs, gradients and breaks; it cannot see the
generators' state, which is what the fix is about."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from graphmend.rewrite import fix_source

from .differential import import_case, same

FIXTURES = Path(__file__).parent / "fixtures" / "TrainingDrawFixer"
CASES = sorted(FIXTURES.glob("*.in.py"))


def _state() -> tuple[Any, ...]:
    numpy_state = np.random.get_state()
    return (numpy_state[1].tolist(), numpy_state[2], random.getstate())


def _run(model: Any, args: tuple, seed: int) -> tuple[Any, tuple[Any, ...]]:
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    output = model(*args)
    return output, _state()


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("case", CASES, ids=[p.name[:-6] for p in CASES])
def test_the_fixed_module_leaves_the_generators_where_the_original_did(case: Path, training: bool, tmp_path: Path) -> None:
    fixed_file = tmp_path / "fixed.py"
    result = fix_source(case.read_text(encoding="utf-8"), str(case))
    assert [f.finding.code for f in result.applied] == ["GM309"], "the fixture was not fixed by the draw fix"
    fixed_file.write_text(result.fixed, encoding="utf-8")
    original, fixed = import_case(case), import_case(fixed_file)
    original_model, fixed_model = original.make().train(training), fixed.make().train(training)
    backends: list[str | None] = [None, "eager"] + (["inductor"] if not training else [])  # train keeps its break
    for backend in backends:
        torch._dynamo.reset()
        runnable = fixed_model if backend is None else torch.compile(fixed_model, backend=backend)
        for seed, args in enumerate(original.inputs()[:3]):
            expected, expected_state = _run(original_model, args, seed)
            got, got_state = _run(runnable, args, seed)
            assert not same(expected, got), f"{backend}, input #{seed}: {same(expected, got)}"
            assert got_state == expected_state, f"{backend}, input #{seed}: the generators moved differently"
