"""The ordered-effect fix's premises, measured on the installed torch, and its helper's fallbacks.

Why a custom op with an ordered effect, and not the two mechanisms dynamo offers for logging:
`reorderable_logging_functions` drops calls made in inlined functions (every submodule's forward),
and `leaf_function` does not compile under inductor. If a torch release changes either, these
tests say so, and the choice can be revisited."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
import torch
from graphmend import analyze
from graphmend.rewrite import fix_source

from .differential import callable_of
from .ground_truth import import_case
from .observe import observe, run_compiled

FIXTURES = Path(__file__).parent / "fixtures" / "OrderedEffectFixer"


def test_reorderable_logging_drops_calls_in_inlined_functions() -> None:
    printed: list[str] = []

    def record(*args: object) -> None:
        printed.append(" ".join(map(str, args)))

    def helper(x: torch.Tensor) -> torch.Tensor:
        record("helper")
        return x + 1

    def f(x: torch.Tensor) -> torch.Tensor:
        y = helper(x)
        record("root")
        return y

    torch._dynamo.reset()
    with torch._dynamo.config.patch(reorderable_logging_functions={record}):
        torch.compile(f, backend="eager")(torch.ones(2))
    torch._dynamo.reset()
    assert printed == ["root"], "torch now keeps reorderable calls of inlined functions: reconsider Defer"


def test_leaf_function_does_not_compile_under_inductor() -> None:
    from torch._dynamo.decorators import leaf_function

    @leaf_function
    def show(x: torch.Tensor) -> None:
        return None

    @show.register_fake
    def _(x: torch.Tensor) -> None:
        return None

    def f(x: torch.Tensor) -> torch.Tensor:
        show(x)
        return x * 2

    torch._dynamo.reset()
    with pytest.raises(Exception, match="AssertionError"):
        torch.compile(f, backend="inductor")(torch.ones(2))
    torch._dynamo.reset()


def _fixed_module(tmp_path: Path, source: str):  # type: ignore[no-untyped-def]
    fixed = fix_source(source, "case.py").fixed
    assert fixed != source, "nothing was fixed"
    path = tmp_path / "fixed.py"
    path.write_text(fixed, encoding="utf-8")
    return import_case(path), path


def test_values_the_schema_does_not_admit_run_the_original_code(tmp_path: Path) -> None:
    """The analysis takes the inputs of a compiled function for tensors; a caller that passes a
    float gets the original behaviour (and its break), not a schema error."""
    source = (
        "import torch\n\n\n@torch.compile\ndef f(x, limit):\n    y = x * 2\n"
        "    if (y > limit).any():\n        print('over', limit)\n    return y\n\n\n"
        "def inputs():\n    return [(torch.ones(3), 1.5)]\n"
    )
    module, path = _fixed_module(tmp_path, source)
    fn = callable_of(module)
    eager = observe(fn, (torch.ones(3), 1.5))
    compiled = run_compiled(fn, [(torch.ones(3), 1.5), (torch.ones(3), torch.tensor(1.5))], str(path))
    assert eager.stdout == compiled.observations[0].stdout == "over 1.5\n"
    assert compiled.observations[1].stdout == "over tensor(1.5000)\n"
    assert compiled.observations[0].error is None


def test_a_list_passed_for_a_value_runs_the_original_code(tmp_path: Path) -> None:
    """A moved call's argument the op cannot take as a value (botorch's `ignore_dims=[0, 1]`): the
    function is called itself, with the list. Passing the list's text instead made
    `set(ignore_dims)` a set of characters, and a warning came where the original gave none."""
    source = (FIXTURES / "check_helper_grad_mode.in.py").read_text(encoding="utf-8")
    module, path = _fixed_module(tmp_path, source)
    fn = callable_of(module)
    cases = [(torch.rand(4, 3) - 0.5, [0, 1, 2]), (torch.rand(4, 3) - 0.5, [1]), (torch.rand(4, 3) - 0.5, None)]
    expected = [observe(fn, args).warnings for args in cases]
    assert expected == [[], [("UserWarning", "Data is not contained to the unit cube.")]] * 1 + [[("UserWarning", "Data is not contained to the unit cube.")]] or expected[0] == []
    compiled = run_compiled(fn, cases, str(path))
    assert [o.warnings for o in compiled.observations] == expected


def test_without_ordered_custom_ops_the_helper_keeps_the_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a torch without `register_effect`, the moved code is a plain function: same behaviour,
    the break stays (an op without its effect could be dropped as dead code)."""
    from torch._library.custom_ops import CustomOpDef

    monkeypatch.delattr(CustomOpDef, "register_effect")
    source = (FIXTURES / "log_if_nan.in.py").read_text(encoding="utf-8")
    module, path = _fixed_module(tmp_path, source)
    fn = callable_of(module)
    assert not hasattr(module._graphmend_f_log, "_opoverload")
    records = io.StringIO()
    handler = logging.StreamHandler(records)
    logging.getLogger(module.__name__).addHandler(handler)
    try:
        result = run_compiled(fn, [(torch.tensor([float("nan"), 1.0]),)], str(path))
    finally:
        logging.getLogger(module.__name__).removeHandler(handler)
    assert "NaN in the activations" in records.getvalue()
    assert result.break_sites, "without the op, the log call breaks as before"


def test_moved_code_is_opaque_to_the_analysis(tmp_path: Path) -> None:
    """The functions the fix adds are custom ops: their bodies are not compiled code, and calling
    them is not a break, so checking the fixed file finds nothing there."""
    for path in sorted(FIXTURES.glob("*.out.py")):
        findings = analyze(path.read_text(encoding="utf-8"), str(path))
        assert not [f for f in findings if f.function.startswith("_graphmend")], path.name


def test_inductor_keeps_random_seeds_alive_around_an_ordered_op(tmp_path: Path) -> None:
    """A torch 2.13 inductor bug, found by the held-out corpus: in a loop that draws `torch.randn`
    on some iterations, the C++ backend deferred a fused kernel past the next ordered op and freed
    the seeds buffer before the kernel read it (UnboundLocalError in the generated code). Inductor
    did not keep the ops' ORDERED effect as a dependency; the token every op now writes
    (ordered_helper.py) is a real data dependency, which it keeps, and the loop compiles."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Sampler(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(5, 4)\n\n"
        "    def forward(self, x):\n        n = x.shape[0]\n        for i in range(3, 0, -1):\n"
        "            print('step', i)\n            t = torch.full((n, 1), i / 3)\n"
        "            z = torch.randn(n, 4) if i > 1 else 0\n"
        "            x = self.lin(torch.cat([x, t], dim=1)) + z\n        return x\n"
    )
    module, _ = _fixed_module(tmp_path, source)
    torch._dynamo.reset()
    try:
        output = torch.compile(module.Sampler(), backend="inductor")(torch.randn(2, 4))
    finally:
        torch._dynamo.reset()
    assert output.shape == (2, 4)


def test_inductor_runs_two_ordered_ops_in_program_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On torch 2.13 inductor scheduled two custom ops whose only link is their ORDERED effect
    in either order (a print whose input is ready first came first). The token each op writes
    makes the second read what the first wrote, so the prints keep their order."""
    source = (
        "import torch\n\n\n@torch.compile\ndef f(x):\n    loss = (x**2).mean()\n"
        "    print('loss', loss)\n    print('max', x.max())\n    return loss * 2\n"
    )
    module, _ = _fixed_module(tmp_path, source)
    function = module.f._torchdynamo_orig_callable
    torch._dynamo.reset()
    try:
        compiled = torch.compile(function, backend="inductor")
        capsys.readouterr()
        for size in (5, 6):
            compiled(torch.ones(size))
    finally:
        torch._dynamo.reset()
    lines = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert lines == ["loss", "max", "loss", "max"]


def test_two_reporting_calls_in_one_if_move_as_one_op() -> None:
    """Both calls of a reporting function in one tensor `if` widen to that `if`: it moves once, and
    no second op function is written that nothing calls."""
    source = '''
import warnings

import torch


def report(msg):
    warnings.warn(msg, stacklevel=2)


@torch.compile
def f(x):
    if (x < 0).any():
        report("negative values")
        report("check your input")
    return x * 2
'''
    fixed = fix_source(source, "case.py").fixed
    defined = [line for line in fixed.splitlines() if line.startswith("def _graphmend_f_")]
    assert len(defined) == 1, defined
    assert fixed.count(defined[0][4:].split("(")[0] + "(") == 2  # defined once, called once
