"""A number kept as a 0-d tensor meets tensors as the Python number did, to the last bit.

The scalar fixer rounds the 0-d tensor to `_graphmend_number_dtype(x, number)` before it meets
`x`, and writes `n / x` as `x.reciprocal() * n` (what `Tensor.__rtruediv__` does with a Python
number). The fixture tests compare with a tolerance; these compare with `torch.equal` and the
dtype, over every dtype and rank the helper distinguishes, so a wrong rounding dtype fails here.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import pytest
import torch
from graphmend.rewrite.compile_checks import _TEXTS, NUMBER_DTYPE

_namespace: dict[str, object] = {"torch": torch}
exec(_TEXTS[NUMBER_DTYPE].format(name="number_dtype", torch="torch"), _namespace)
number_dtype: Callable[[torch.Tensor, object], torch.dtype] = _namespace["number_dtype"]  # type: ignore[assignment]

DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64)
NUMBERS = (1.0907322279942, 1 / 3, 7.123456789012345, -2.2, 3001, -7, 0.0)
OPERATIONS: dict[str, Callable[[object, object], torch.Tensor]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "n - x": lambda x, n: n - x,  # type: ignore[operator]
}


def _tensor(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    torch.manual_seed(0)
    if dtype.is_floating_point:
        return (torch.randn(shape) * 3).to(dtype)
    return torch.randint(1, 50, shape, dtype=dtype)


def _kept(number: float | int) -> torch.Tensor:
    """The number as the 0-d tensor it was read from (float64 or int64 holds it exactly)."""
    return torch.tensor(number, dtype=torch.float64 if isinstance(number, float) else torch.int64)


def _reduced_scalar_product(x: torch.Tensor, operation: str) -> bool:
    """The one documented exception: a 0-d float16/bfloat16 tensor takes a Python number at
    float32 in `*` and `/`, which no 0-d tensor of its own dtype reproduces."""
    return x.dim() == 0 and x.dtype in (torch.float16, torch.bfloat16) and operation in ("*", "/")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (257,)], ids=["0-d", "1-d"])
def test_a_rounded_number_meets_a_tensor_as_the_python_number_did(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    x = _tensor(dtype, shape)
    checked = 0
    for name, operation in OPERATIONS.items():
        if _reduced_scalar_product(x, name):
            continue
        for number in NUMBERS:
            if name == "/" and number == 0:
                continue
            expected = operation(x, number)
            kept = operation(x, _kept(number).to(number_dtype(x, number)))
            assert kept.dtype == expected.dtype, f"{dtype} {shape} {name} {number!r}"
            assert torch.equal(kept, expected), f"{dtype} {shape} {name} {number!r}"
            checked += 1
    assert checked >= 21  # every case but the exception ran


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (257,)], ids=["0-d", "1-d"])
def test_a_number_divided_by_a_tensor_is_the_reciprocal_times_the_number(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    x = _tensor(dtype, shape)
    for number in NUMBERS:
        expected = number / x
        kept = x.reciprocal() * _kept(number).to(number_dtype(x.reciprocal(), number))
        if _reduced_scalar_product(x, "*"):
            assert kept.dtype == expected.dtype
            continue
        assert kept.dtype == expected.dtype and torch.equal(kept, expected), f"{dtype} {shape} {number!r}"


def test_dividing_directly_would_differ_in_the_last_bit() -> None:
    """Why the reciprocal is written out: a 0-d tensor divided by `x` rounds once, Python twice."""
    x = _tensor(torch.float32, (257,))
    assert not torch.equal(1 / 3 / x, torch.tensor(1 / 3, dtype=torch.float64).to(torch.float32) / x)
