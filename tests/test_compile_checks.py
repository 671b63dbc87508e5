"""A rewrite behind a compile-time check keeps the original test for the inputs the check rejects.

The padding-mask fix multiplies by the mask every time only where dynamo knows the product keeps
the tensor's shape and dtype and the mask needs no gradient; anywhere else the original all-ones
test runs (and breaks, as before). Each input here fails the check in one way: the outputs, dtypes,
shapes and gradients must still be the original's, and the inputs that pass must not break.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from graphmend.rewrite.engine import fix_source

from .ground_truth import _unwrap, import_case
from .observe import run_compiled

SOURCE = '''import torch


@torch.compile
def f(x, mask):
    if not torch.all(mask == 1):
        x = x * mask
    return x + 0
'''


def _pair(tmp_path: Path, source: str, expected: str):  # type: ignore[no-untyped-def]
    """The original and fixed functions (plain, not compiled) and their files; the fix must use `expected`."""
    fixed = fix_source(source, "case.py")
    assert fixed.applied and expected in fixed.fixed
    paths = [tmp_path / "original.py", tmp_path / "fixed.py"]
    for path, text in zip(paths, (source, fixed.fixed)):
        path.write_text(text, encoding="utf-8")
    return [_unwrap(import_case(p).f) for p in paths], paths


def _versions(tmp_path: Path):  # type: ignore[no-untyped-def]
    return _pair(tmp_path, SOURCE, "_graphmend_product_keeps(x, mask)")


def test_inputs_the_check_accepts_no_longer_break(tmp_path: Path) -> None:
    (original, fixed), (original_file, fixed_file) = _versions(tmp_path)
    inputs = [(torch.randn(3, 5), torch.ones(5, dtype=torch.long)), (torch.randn(3, 5), torch.tensor([1, 0, 1, 1, 0]))]
    before = run_compiled(original, inputs, str(original_file))
    after = run_compiled(fixed, inputs, str(fixed_file))
    assert before.break_sites and not after.break_sites
    for a, b in zip(before.observations, after.observations):
        assert a.error is None and b.error is None
        assert a.output.dtype == b.output.dtype and torch.equal(a.output, b.output)


def test_inputs_the_check_rejects_keep_the_original_result(tmp_path: Path) -> None:
    (original, fixed), (_original_file, fixed_file) = _versions(tmp_path)
    rejected = [
        (torch.randn(3, 5, dtype=torch.half), torch.ones(5)),  # the product would widen half to float
        (torch.randn(5), torch.ones(3, 5, dtype=torch.long)),  # the product would broadcast to (3, 5)
        (torch.arange(5), torch.ones(5)),  # an integer tensor times a float mask would become float
    ]
    for x, mask in rejected:
        for run in (original, fixed, torch.compile(fixed, backend="eager")):
            torch._dynamo.reset()
            out = run(x, mask)
            assert out.dtype == x.dtype and out.shape == x.shape and torch.equal(out, x)
    compiled = run_compiled(fixed, rejected, str(fixed_file))
    assert compiled.break_sites, "a rejected input should take the original test, which breaks"


def test_a_mask_that_requires_grad_gets_none_for_all_ones(tmp_path: Path) -> None:
    (original, fixed), _ = _versions(tmp_path)
    for run in (original, fixed):
        x = torch.randn(3, 5, requires_grad=True)
        mask = torch.ones(5, requires_grad=True)
        run(x, mask).sum().backward()
        assert mask.grad is None and x.grad is not None and torch.equal(x.grad, torch.ones(3, 5))


COMPLEMENT_SOURCE = '''import torch


@torch.compile
def f(x, pad):
    if pad.any():
        x = x * (1 - pad)
    return x + 0
'''


def test_a_padding_mask_the_complement_check_rejects_keeps_the_original_result(tmp_path: Path) -> None:
    """`1 - pad` raises for a bool mask, widens half to float for a float mask, and broadcasts a
    larger mask: with no padding marked the original never computed it, and the fix must not either."""
    (original, fixed), (original_file, fixed_file) = _pair(tmp_path, COMPLEMENT_SOURCE, "_graphmend_complement_keeps(x, pad)")
    rejected = [
        (torch.randn(3, 5), torch.zeros(5, dtype=torch.bool)),
        (torch.randn(3, 5, dtype=torch.half), torch.zeros(5)),
        (torch.randn(5), torch.zeros(3, 5, dtype=torch.long)),
    ]
    for x, pad in rejected:
        for run in (original, fixed, torch.compile(fixed, backend="eager")):
            torch._dynamo.reset()
            out = run(x, pad)
            assert out.dtype == x.dtype and out.shape == x.shape and torch.equal(out, x)
    assert run_compiled(fixed, rejected, str(fixed_file)).break_sites, "a rejected input should take the original test, which breaks"
    accepted = [(torch.randn(3, 5), torch.zeros(5, dtype=torch.long)), (torch.randn(3, 5), torch.tensor([0, 1, 0, 0, 1]))]
    before, after = run_compiled(original, accepted, str(original_file)), run_compiled(fixed, accepted, str(fixed_file))
    assert before.break_sites and not after.break_sites
    for a, b in zip(before.observations, after.observations):
        assert a.error is None and b.error is None and a.output.dtype == b.output.dtype and torch.equal(a.output, b.output)


COUNTS_SOURCE = '''import torch

BINS = 4


@torch.compile
def f(scores):
    codes = scores.argmax(dim=-1)
    return torch.bincount(codes, minlength=BINS)
'''


def test_counts_over_more_entries_than_bins_run_bincount_as_before(tmp_path: Path) -> None:
    """An argmax over 4 entries fills exactly 4 bins: no break, the same counts. Over 6 entries an
    index may exceed the bins, so the check sends it to `bincount`, which sizes by the data."""
    (original, fixed), (original_file, fixed_file) = _pair(tmp_path, COUNTS_SOURCE, "_graphmend_counts_fit(codes, scores.shape[-1], BINS)")
    g = torch.Generator().manual_seed(0)
    fitting = [(torch.randn(7, 4, generator=g),), (torch.zeros(0, 4),)]
    wider = [(torch.randn(7, 6, generator=g) + torch.arange(6.0) * 3,), (torch.randn(3, 6, generator=g) - torch.arange(6.0) * 3,)]
    for args in fitting + wider:
        expected = original(*args)
        for run in (fixed, torch.compile(fixed, backend="eager")):
            torch._dynamo.reset()
            out = run(*args)
            assert out.dtype == expected.dtype and torch.equal(out, expected)
    assert [len(original(*args)) for args in wider] == [6, 4], "the wider inputs should take both sizes"
    before, after = run_compiled(original, fitting, str(original_file)), run_compiled(fixed, fitting, str(fixed_file))
    assert before.break_sites and not after.break_sites
    assert run_compiled(fixed, wider, str(fixed_file)).break_sites, "a rejected input should take the original bincount, which breaks"


LOGIC_SOURCE = '''import torch


@torch.compile
def f(x, low, high):
    inside = (x >= low).all() and (x <= high).all()
    return inside
'''


def test_an_and_whose_second_operand_cannot_broadcast_returns_what_the_original_returned(tmp_path: Path) -> None:
    """`(x >= low).all() and (x <= high).all()` never compares with `high` when the first test
    fails: with a `high` that cannot broadcast against `x`, the rewrite must not compare either."""
    (original, fixed), (original_file, fixed_file) = _pair(tmp_path, LOGIC_SOURCE, "_graphmend_broadcastable((x, high))")
    x = torch.tensor([[0.5, -2.0], [0.1, 0.2], [0.3, 0.4]])
    mismatched = (x, torch.tensor([0.0, 0.0]), torch.ones(3))
    for run in (original, fixed, torch.compile(fixed, backend="eager")):
        torch._dynamo.reset()
        out = run(*mismatched)
        assert out.dtype == torch.bool and out.shape == () and not bool(out)
    fitting = [(x, torch.tensor([-3.0, -3.0]), torch.ones(2)), (x, torch.tensor([0.0, 0.0]), torch.ones(2))]
    before, after = run_compiled(original, fitting, str(original_file)), run_compiled(fixed, fitting, str(fixed_file))
    assert before.break_sites and not after.break_sites
    for a, b in zip(before.observations, after.observations):
        assert a.error is None and b.error is None and torch.equal(a.output, b.output)


WHERE_SOURCE = '''import torch


@torch.compile
def f(x, gate):
    if gate.sum() > 0:
        y = x * 0.5
    else:
        y = x
    return y
'''


def test_where_over_values_of_another_dtype_keeps_the_original_branch(tmp_path: Path) -> None:
    (original, rewritten), paths = _pair(tmp_path, WHERE_SOURCE, "_graphmend_same_type(y_if_true, x)")
    rejected = [torch.arange(3), torch.tensor([1, 2], dtype=torch.int32)]  # x * 0.5 is floating: where would promote x
    cases = [(x, gate) for x in rejected for gate in (torch.ones(2), -torch.ones(2))]
    for args in cases:
        expected = original(*args)
        for run in (rewritten, torch.compile(rewritten, backend="eager")):
            torch._dynamo.reset()
            out = run(*args)
            assert out.dtype == expected.dtype and out.shape == expected.shape and torch.equal(out, expected)
    assert run_compiled(rewritten, cases, str(paths[1])).break_sites, "rejected inputs take the original branch, which breaks"


def test_values_of_two_tensors_are_not_computed_on_both_paths() -> None:
    """`torch.cat((tokens, sparse))` of a placeholder (sam) raises where the branch is not taken."""
    source = WHERE_SOURCE.replace("y = x * 0.5", "y = torch.cat((x, extra), dim=-1)").replace("def f(x, gate)", "def f(x, gate, extra)")
    result = fix_source(source, "cat.py")
    assert not result.applied and any(d.key == "dtype-shape-unproven" and "could raise" in d.reason for d in result.declined)


CHURN_SOURCE = '''import torch


@torch.compile
def f(sample, noise, sigma, sigma_hat):
    if sigma_hat > sigma:
        sample = sample + noise * (sigma_hat**2 - sigma**2) ** 0.5
    return sample
'''


def test_operands_the_broadcast_check_rejects_are_not_computed_on_the_path_not_taken(tmp_path: Path) -> None:
    """0-d sigmas broadcast with any sample, so the value is computed on both paths where dynamo
    finds the operands floating and of one shape apart from one-element tensors. Noise of another
    shape would raise there: the check rejects it and the original branch runs, which raises only
    where the original raised; integer operands take the original branch too."""
    (original, rewritten), paths = _pair(tmp_path, CHURN_SOURCE, "_graphmend_broadcast_free(sigma, sigma_hat, noise, sample)")
    mismatched = (torch.randn(2, 3), torch.randn(5), torch.tensor(1.0), torch.tensor(0.5))  # branch not taken: no error
    integers = (torch.arange(6).reshape(2, 3), torch.ones(2, 3, dtype=torch.long), torch.tensor(1), torch.tensor(2))
    for args in (mismatched, integers):
        expected = original(*args)
        for run in (rewritten, torch.compile(rewritten, backend="eager")):
            torch._dynamo.reset()
            out = run(*args)
            assert out.dtype == expected.dtype and out.shape == expected.shape and torch.equal(out, expected)
    taken = (torch.randn(2, 3), torch.randn(5), torch.tensor(0.5), torch.tensor(1.0))
    for run in (original, rewritten):
        with pytest.raises(RuntimeError, match="must match"):
            run(*taken)
    assert run_compiled(rewritten, [mismatched], str(paths[1])).break_sites, "rejected inputs take the original branch, which breaks"
    accepted = [(torch.randn(2, 3), torch.randn(2, 3), torch.tensor(0.5), torch.tensor(s)) for s in (0.25, 1.0)]
    assert not run_compiled(rewritten, accepted, str(paths[1])).break_sites, "0-d sigmas with a sample of any shape pass"


EARLY_RETURN_SOURCE = '''import torch


@torch.compile
def f(x):
    scale = x.abs().amax()
    if scale == 0:
        return torch.zeros_like(x)
    out = x / scale
    return out.clamp(-0.5, 0.5)
'''


def test_an_early_return_of_another_dtype_returns_what_the_original_returned(tmp_path: Path) -> None:
    """On an integer input the early value (integers) and the late one (floats) differ in dtype:
    the rewrite returns the value the original returned, on both paths."""
    (original, rewritten), paths = _pair(tmp_path, EARLY_RETURN_SOURCE, "_graphmend_same_type(early_value, late_value)")
    cases = [(torch.tensor([3, -1, 2]),), (torch.zeros(3, dtype=torch.long),)]
    for args in cases:
        expected = original(*args)
        for run in (rewritten, torch.compile(rewritten, backend="eager")):
            torch._dynamo.reset()
            out = run(*args)
            assert out.dtype == expected.dtype and out.shape == expected.shape and torch.equal(out, expected)
    assert run_compiled(rewritten, cases, str(paths[1])).break_sites, "rejected inputs take the original branch, which breaks"


CONDITION_SOURCE = '''import torch


@torch.compile
def f(loss, limit: float):
    if loss > limit:
        loss = limit + (loss - limit) * 0.5
    return loss * 2
'''


def test_a_condition_of_several_values_still_raises_as_the_original_did(tmp_path: Path) -> None:
    (original, rewritten), _ = _pair(tmp_path, CONDITION_SOURCE, "_graphmend_one_value(condition)")
    args = (torch.tensor([3.0, 0.5]), 1.0)  # `if` on two values raises; where would broadcast them
    messages = []
    for run in (original, rewritten, torch.compile(rewritten, backend="eager")):
        torch._dynamo.reset()
        with pytest.raises(RuntimeError) as raised:
            run(*args)
        messages.append(str(raised.value).splitlines()[0])
    assert len(set(messages)) == 1 and "ambiguous" in messages[0]


CHAINED_SOURCE = '''import torch


@torch.compile
def f(x, sigma, s_tmin: float, s_tmax: float):
    if s_tmin <= sigma <= s_tmax:
        x = x * (sigma + 1)
    return x
'''


def test_a_chained_condition_of_several_values_still_raises_as_the_original_did(tmp_path: Path) -> None:
    """The links are joined into one temporary checked to be one value: with a `sigma` of two
    values the original branches run, and raise where the original `if` raised."""
    (original, rewritten), _ = _pair(tmp_path, CHAINED_SOURCE, "_graphmend_one_value(condition)")
    args = (torch.randn(2), torch.tensor([1.0, 2.0]), 0.5, 5.0)
    messages = []
    for run in (original, rewritten, torch.compile(rewritten, backend="eager")):
        torch._dynamo.reset()
        with pytest.raises(RuntimeError) as raised:
            run(*args)
        messages.append(str(raised.value).splitlines()[0])
    assert len(set(messages)) == 1 and "ambiguous" in messages[0]


def test_a_chained_condition_on_python_numbers_runs_the_original_branch(tmp_path: Path) -> None:
    """`sigmas` may be a list of floats: both links are then Python bools, which the joined
    condition must take (`&`, not `torch.logical_and`) for the one-value check to reject them."""
    (original, rewritten), _ = _pair(tmp_path, CHAINED_SOURCE, "_graphmend_one_value(condition)")
    for sigma in (2.0, 9.0):
        args = (torch.randn(3), sigma, 0.5, 5.0)
        for run in (rewritten, torch.compile(rewritten, backend="eager")):
            torch._dynamo.reset()
            assert torch.equal(run(*args), original(*args))


def test_a_chained_bound_of_unknown_type_is_not_compared_on_every_path() -> None:
    """Python compares `sigma <= s_tmax` only where `s_tmin <= sigma` holds; `s_tmax=None` ("no
    upper bound") would raise if the link were computed on every path."""
    source = CHAINED_SOURCE.replace("s_tmin: float, s_tmax: float", "s_tmin=0.0, s_tmax=float('inf')")
    result = fix_source(source, "chained.py")
    assert not result.applied and any(d.key == "chained-not-scalar" and "not known to be a number" in d.reason for d in result.declined)


BROADCAST_SOURCE = '''import torch


@torch.compile
def f(sample, noise, sigma_hat):
    keep = sample > 0
    base = sample * 2.0
    if sigma_hat > 1:
        sample = (1 - keep) * noise * sigma_hat + base
    return sample
'''


def test_every_operand_of_one_shape_is_checked(tmp_path: Path) -> None:
    """`keep` and `base` have the shape of `sample`; `keep` is bool, and `1 - keep` raises. Each
    name is in the broadcast check, which rejects the bool: where the branch is not taken, the
    original returns `sample` (it never computed the value)."""
    (original, rewritten), _ = _pair(tmp_path, BROADCAST_SOURCE, "_graphmend_broadcast_free(")
    args = (torch.randn(3), torch.randn(3), torch.tensor(0.5))
    assert "keep" in fix_source(BROADCAST_SOURCE, "b.py").fixed.split("_graphmend_broadcast_free(")[-1].split(")")[0]
    for run in (rewritten, torch.compile(rewritten, backend="eager")):
        torch._dynamo.reset()
        assert torch.equal(run(*args), original(*args))


def test_complex_products_through_a_mask_keep_the_original_assignment(tmp_path: Path) -> None:
    """Eager CPU rounds a complex product differently at different positions of a tensor, so a
    where over the whole tensors would not write the bits `x[m] * y[m]` writes."""
    source = (
        "import torch\n\n\n@torch.compile\ndef f(out, x, y, mask):\n    out = out.clone()\n"
        "    out[mask] = x[mask] * y[mask]\n    return out\n"
    )
    (original, rewritten), paths = _pair(tmp_path, source, "_graphmend_mask_selects_alike(mask, out, x, y")
    torch.manual_seed(0)
    x, y = torch.randn(37, dtype=torch.complex64), torch.randn(37, dtype=torch.complex64)
    args = (torch.zeros(37, dtype=torch.complex64), x, y, torch.rand(37) > 0.3)
    assert torch.equal(rewritten(*args), original(*args))
    assert run_compiled(rewritten, [args], str(paths[1])).break_sites, "complex operands take the original assignment, which breaks"


MASKED_ASSIGN_SOURCE = '''import torch


@torch.compile
def f(out, src, mask):
    out = out.clone()
    out[mask] = src[mask]
    return out
'''


def test_an_assignment_through_a_mask_the_check_rejects_runs_as_before(tmp_path: Path) -> None:
    source = MASKED_ASSIGN_SOURCE.replace("(out, src, mask)", "(out, src, m)").replace("mask]", "m > 0]")
    (original, rewritten), paths = _pair(tmp_path, source, "_graphmend_mask_selects_alike(m > 0, out, src)")
    rows = torch.tensor([1.0, -1.0, 2.0])
    rejected = [
        (torch.zeros(3, 4), torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 4)),  # index_put raises on dtypes
        (torch.zeros(3, 4, dtype=torch.long), torch.full((3, 4), 2.7), torch.randn(3, 4)),  # where would promote
        (torch.zeros(3, 4), torch.randn(3, 4), rows),  # a mask over rows selects whole rows
        (torch.zeros(3, 4), torch.randn(3, 4), torch.randn(4)),  # a mask of another shape raises
    ]

    def outcome(run, args):  # type: ignore[no-untyped-def]
        torch._dynamo.reset()
        try:
            out = run(*args)
        except (RuntimeError, IndexError) as error:
            return type(error).__name__, str(error).splitlines()[0]
        return out.dtype, out.shape, out.tolist()

    for args in rejected:
        expected = outcome(original, args)
        for run in (rewritten, torch.compile(rewritten, backend="eager")):
            assert outcome(run, args) == expected
    assert isinstance(outcome(original, rejected[2]), tuple), "the row mask should assign rows"
    assert run_compiled(rewritten, rejected[2:3], str(paths[1])).break_sites, "rejected inputs take the original assignment, which breaks"


def test_arithmetic_through_a_mask_is_checked_for_a_dtype_it_keeps(tmp_path: Path) -> None:
    """`out[m] = src[m] / 2` on integer tensors raises (index_put of float values into an integer
    tensor); `where` would promote and `copy_` truncate: the check sends it to the original."""
    source = MASKED_ASSIGN_SOURCE.replace("out[mask] = src[mask]", "out[m > 0] = src[m > 0] / 2").replace("(out, src, mask)", "(out, src, m)")
    (original, rewritten), _ = _pair(tmp_path, source, 'arithmetic="floating"')
    args = (torch.zeros(4, dtype=torch.long), torch.arange(4), torch.tensor([1.0, -1.0, 2.0, 3.0]))
    messages = []
    for run in (original, rewritten, torch.compile(rewritten, backend="eager")):
        torch._dynamo.reset()
        with pytest.raises(RuntimeError) as raised:
            run(*args)
        messages.append(str(raised.value).splitlines()[0])
    assert len(set(messages)) == 1 and "dtype" in messages[0]


@pytest.mark.parametrize("number", [1, 1.0])
def test_a_number_rounded_by_the_helper_gives_the_result_type_python_gives(number: float) -> None:
    """`_graphmend_number_dtype(x, n)` is the dtype a Python number is taken at when it meets `x`
    (`torch.result_type` itself breaks the graph): for every dtype, with and without dimensions,
    the number rounded to it must meet `x` in the result dtype the Python number gives (the values
    are compared bit for bit in test_number_dtype.py)."""
    from graphmend.rewrite.compile_checks import _TEXTS, NUMBER_DTYPE

    namespace: dict[str, object] = {"torch": torch}
    exec(_TEXTS[NUMBER_DTYPE].format(name=NUMBER_DTYPE, torch="torch"), namespace)
    helper = namespace[NUMBER_DTYPE]
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]
    for dtype in dtypes:
        for shape in ((), (3,)):
            tensor = torch.zeros(shape, dtype=dtype)
            kept = torch.tensor(number).to(helper(tensor, number))  # type: ignore[operator]
            assert torch.result_type(tensor, kept) == torch.result_type(tensor, number), (dtype, shape)


MASKED_ROWS_SOURCE = '''import torch


@torch.compile
def f(x, row_mask, col_mask):
    return x[row_mask, :].mean() + x[:, col_mask].sum()
'''


def _outcome(run, args):  # type: ignore[no-untyped-def]
    torch._dynamo.reset()
    try:
        out = run(*args)
    except (RuntimeError, IndexError) as error:
        return type(error).__name__, str(error).splitlines()[0]
    return out.dtype, out.shape, round(out.item(), 4)  # the column sum is rewritten: equal up to rounding


def test_a_mask_among_slices_selects_rows_and_columns_without_a_break(tmp_path: Path) -> None:
    (original, rewritten), paths = _pair(tmp_path, MASKED_ROWS_SOURCE, "_graphmend_mask_spans(row_mask, 0, 1, x)")
    accepted = [
        (torch.randn(4, 3, 2), torch.randn(4, 3) > 0, torch.randn(3, 2) > 0),  # rows over two dimensions
        (torch.randn(3, 3), torch.tensor([True, False, True]), torch.zeros(3, dtype=torch.bool)),  # no column
    ]
    for args in accepted:
        expected, got = original(*args), rewritten(*args)
        assert got.dtype == expected.dtype and torch.allclose(got, expected)
    before = run_compiled(original, accepted, str(paths[0]))
    after = run_compiled(rewritten, accepted, str(paths[1]))
    assert before.break_sites and not after.break_sites
    for a, b in zip(before.observations, after.observations):
        assert a.error is None and b.error is None and torch.allclose(a.output, b.output)


def test_a_mask_among_slices_the_check_rejects_runs_as_before(tmp_path: Path) -> None:
    (original, rewritten), _ = _pair(tmp_path, MASKED_ROWS_SOURCE, "_graphmend_mask_spans(row_mask, 0, 1, x)")
    columns = torch.tensor([True, False, True])
    rejected = [
        (torch.randn(4, 3), torch.randn(4, 3) > 0, columns),  # `x[row_mask, :]` with a mask over both dimensions raises
        (torch.randn(4, 3), torch.randn(3) > 0, columns),  # a mask of another shape raises
        (torch.randn(4, 3), torch.tensor([1, 0, 0, 1]), columns),  # integer indices (rows 1, 0, 0, 1), not a mask
    ]
    for args in rejected:
        expected = _outcome(original, args)
        for run in (rewritten, torch.compile(rewritten, backend="eager")):
            assert _outcome(run, args) == expected
    assert isinstance(_outcome(original, rejected[2]), tuple), "integer indices should pick rows"


ROW_ADD_SOURCE = """import torch


@torch.compile
def f(base, labels, weight):
    out = base.expand(3, 4) if base.dim() == 1 else base * 1
    out[labels > 0] += weight
    return base, out
"""


def test_an_add_through_a_mask_into_an_expanded_tensor_runs_as_before(tmp_path: Path) -> None:
    """`index_put_` writes through an expanded tensor (with a deprecation warning); `copy_` would
    refuse it: the check sends an expanded `out` to the original statement."""
    (original, rewritten), _ = _pair(tmp_path, ROW_ADD_SOURCE, "_graphmend_mask_adds_rows(labels > 0, out, weight)")
    cases = [
        (torch.zeros(4), torch.tensor([1, -1, 1]), torch.ones(4)),  # expanded: the original writes through it
        (torch.zeros(3, 4), torch.tensor([1, -1, 1]), torch.ones(1, 4)),  # plain: the where
        (torch.zeros(3, 4, dtype=torch.float16), torch.tensor([1, -1, 1]), torch.ones(1, 4, dtype=torch.float16)),
    ]
    for args in cases:
        torch._dynamo.reset()
        with torch.no_grad():
            expected = [t.clone() for t in original(*[a.clone() for a in args])]
            for run in (rewritten, torch.compile(rewritten, backend="eager")):
                torch._dynamo.reset()
                got = run(*[a.clone() for a in args])
                assert all(torch.equal(e, g) and e.dtype == g.dtype for e, g in zip(expected, got))


SLICE_BOUND_VALUES = [
    [2, 3, 1],
    [],
    (1, 2),
    [0, -2, 5],
    [True, True, False],  # a bool tensor (its running sum is int64)
    [1.0, 2.0],  # a float tensor: raises as a bound, with torch's message
    [1, 2.5],
    [[1, 2], [3, 4]],  # rows, not numbers
    [[3], [4]],
    [2**63],  # torch.tensor refuses it
    [2**62, 2**62],  # the running sum wraps in int64
    [-(2**63), 1],
    [np.int64(3), np.int32(2)],
    [torch.tensor(1), torch.tensor(2)],
    torch.tensor([1, 2]),
    3,  # a 0-d tensor: not iterable
]


@pytest.mark.parametrize("values", SLICE_BOUND_VALUES, ids=[repr(v)[:30] for v in SLICE_BOUND_VALUES])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_slice_bounds_select_what_the_tensor_of_values_selected(values: object, dim: int | None) -> None:
    """`_graphmend_slice_bounds(values, dim)` read as slice bounds gives the rows the entries of
    `torch.tensor(values)` (or its `.cumsum(dim)`) gave, or raises the same error, for every kind
    of value torch takes differently from a list of ints."""
    import warnings

    from graphmend.rewrite.compile_checks import _TEXTS, SLICE_BOUNDS

    namespace: dict[str, object] = {"torch": torch}
    exec(_TEXTS[SLICE_BOUNDS].format(name=SLICE_BOUNDS, torch="torch"), namespace)
    helper = namespace[SLICE_BOUNDS]
    rows = torch.arange(40).reshape(20, 2)

    def sliced(make):  # type: ignore[no-untyped-def]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # copying a tensor warns in both
                bounds = make()
            return [rows[bound:].tolist() for bound in bounds] + [rows[:bound].tolist() for bound in bounds]
        except Exception as error:  # the same error is the point
            return type(error), str(error)

    def original():  # type: ignore[no-untyped-def]
        tensor = torch.tensor(values)
        return tensor if dim is None else tensor.cumsum(dim)

    assert sliced(lambda: helper(values, dim)) == sliced(original)  # type: ignore[operator]
    if isinstance(values, (list, tuple)) and values and all(type(v) is int for v in values) and max(map(abs, values)) < 2**40:
        assert isinstance(helper(values, dim), list)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("value", "build", "index", "bits"),
    [
        (4, torch.IntTensor, 0, 31),
        (4, torch.LongTensor, -1, 63),
        (2**40, torch.LongTensor, 0, 63),
        (4.7, torch.IntTensor, 0, 31),  # truncated by the tensor: its entry, 4
        (True, torch.IntTensor, 0, 31),  # a bool: the tensor's entry
        (-3, torch.IntTensor, 0, 31),
        (4, torch.IntTensor, 1, 31),  # out of range: the same IndexError
    ],
)
def test_int_entry_selects_what_the_tensor_entry_selected(value: object, build: object, index: int, bits: int) -> None:
    """`_graphmend_int_entry(v, t, k, bits)` as a slice bound selects the rows `t[k]` selected
    (or raises the same error), and gives the Python int itself only where that is what `t` holds."""
    from graphmend.rewrite.compile_checks import _TEXTS, INT_ENTRY

    namespace: dict[str, object] = {"torch": torch}
    exec(_TEXTS[INT_ENTRY].format(name=INT_ENTRY, torch="torch"), namespace)
    helper = namespace[INT_ENTRY]
    tensor = build([value])  # type: ignore[operator]
    rows = torch.arange(20).reshape(10, 2)

    def sliced(make):  # type: ignore[no-untyped-def]
        try:
            bound = make()
            return rows[:bound].tolist(), rows[bound:].tolist()
        except Exception as error:  # the same error is the point
            return type(error), str(error)

    assert sliced(lambda: helper(value, tensor, index, bits)) == sliced(lambda: tensor[index])  # type: ignore[operator]
    assert (type(helper(value, tensor, index, bits) if index in (0, -1) else None) is int) == (type(value) is int and index in (0, -1))  # type: ignore[operator]
