"""Truth tests spread over lines, as black formats long conditions. CPython 3.11 gives a test's
jump the line of its `if`, `while`, `assert`, ternary or comprehension, unless the tested value is
a comparison (then the comparison's line), and dynamo's log names that line. The findings stay on
the tested values; each carries the line dynamo names (Finding.break_line), which is what the
agreement check matches here."""
import torch

USE_FILTER = True


@torch.compile(backend="eager")
def nan_filter(loss):
    if (
        USE_FILTER
        and torch.isnan(loss).any()  # expect: GM101
    ):
        return loss.new_zeros(())
    return loss


@torch.compile(backend="eager")
def negated_call(x):
    if not (
        torch.isfinite(x).all()  # expect: GM101
    ):
        return x.nan_to_num()
    return x


@torch.compile(backend="eager")
def comparison_on_its_own_line(x):
    if (
        x.sum() > 0  # expect: GM101
    ):
        return x + 1
    return x - 1


@torch.compile(backend="eager")
def grow_until(x):
    while (
        x.sum().lt(10)  # expect: GM103
    ):
        x = x + 1
    return x


@torch.compile(backend="eager")
def ternary(x):
    return (x + 1
            if torch.isnan(x).any()  # expect: GM102
            else x - 1)


@torch.compile(backend="eager")
def checked(x):
    assert (
        torch.isfinite(x).all()  # expect: GM107
    ), f"non-finite values in a tensor of shape {tuple(x.shape)}"
    return x + 1


def sample():
    ones = torch.ones(3)
    return [
        (nan_filter, (torch.tensor(float("nan")),), {}),
        (nan_filter, (torch.tensor(1.0),), {}),
        (negated_call, (ones,), {}),
        (comparison_on_its_own_line, (ones,), {}),
        (grow_until, (ones,), {}),
        (ternary, (ones,), {}),
        (checked, (ones,), {}),
    ]
