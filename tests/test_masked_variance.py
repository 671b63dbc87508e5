"""Masked `var()`/`std()` on selections too small for their correction: the rewrite gives torch's
NaN and torch's gradients (0 into an empty selection, NaN through a one-element unbiased one).

The fixture tests compare warnings too, and torch warns here ("degrees of freedom is <= 0") where
the rewrite does not (nor does the original under inductor or aot_eager), so these inputs are
checked apart, the warning ignored."""

from __future__ import annotations

import warnings

import pytest
import torch
from graphmend.rewrite import fix_source

SOURCE = '''
import torch


@torch.compile
def f(x, m):
    keep = m > 0
    return x[keep].{call}
'''


def _functions(call: str):  # type: ignore[no-untyped-def]
    source = SOURCE.format(call=call)
    result = fix_source(source, "case.py")
    assert result.applied, f"the masked {call} was not rewritten: {[d.reason for d in result.declined]}"
    original: dict[str, object] = {}
    fixed: dict[str, object] = {}
    exec(compile(source, "original.py", "exec"), original)
    exec(compile(result.fixed, "fixed.py", "exec"), fixed)
    return original["f"]._torchdynamo_orig_callable, fixed["f"]._torchdynamo_orig_callable  # type: ignore[attr-defined]


def _value_and_gradient(function, x: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[no-untyped-def]
    x = x.clone().requires_grad_(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = function(x, m)
        value.backward()
    assert x.grad is not None
    return value.detach(), x.grad


@pytest.mark.parametrize("call", ["var()", "std()", "std(correction=0)", "var(unbiased=False)"])
@pytest.mark.parametrize("selected", [0, 1, 2])
def test_small_selections_keep_torch_values_and_gradients(call: str, selected: int) -> None:
    original, fixed = _functions(call)
    torch.manual_seed(selected)
    x = torch.randn(5)
    m = torch.tensor([1.0] * selected + [-1.0] * (5 - selected))
    value_before, gradient_before = _value_and_gradient(original, x, m)
    value_after, gradient_after = _value_and_gradient(fixed, x, m)
    assert torch.allclose(value_before, value_after, equal_nan=True), (value_before, value_after)
    assert torch.allclose(gradient_before, gradient_after, equal_nan=True), (gradient_before, gradient_after)


def test_a_correction_above_one_is_declined() -> None:
    """torch's gradient there is infinite where the masked form's would be NaN."""
    result = fix_source(SOURCE.format(call="var(correction=2)"), "case.py")
    assert not result.applied
    assert len(result.declined) == 1 and "full reduction with a constant correction" in result.declined[0].reason, result.declined


def _error(function, x: torch.Tensor, m: torch.Tensor) -> tuple[str, str] | None:  # type: ignore[no-untyped-def]
    try:
        function(x, m)
    except Exception as exc:  # the behaviour under test: which exception, which message
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("call", ["mean()", "var()", "std(correction=0)"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.bool])
def test_an_integer_or_boolean_selection_raises_as_before(call: str, dtype: torch.dtype) -> None:
    """`x[keep].mean()` raises for an integer or boolean `x` (torch cannot average them); the
    rewrite's sum divided by a count would not, so `_graphmend_floating` keeps the original there.
    Run eagerly: under torch.compile both raise from tracing, with messages that carry dynamo's
    own shapes."""
    original, fixed = _functions(call)
    x, m = torch.tensor([1, 0, 3]).to(dtype), torch.tensor([1.0, -1.0, 1.0])
    expected = _error(original, x, m)
    assert expected is not None and expected[0] == "RuntimeError"
    assert _error(fixed, x, m) == expected
