"""Hand rewrite of cases/wn_botorch_validate_input_scaling.py: the reductions stay in the graph,
each check's decision and its InputDataError / InputDataWarning (same text) run in ordered custom ops."""
import warnings

import torch
from torch import Tensor
from torch._library.effects import EffectType

KIND = "warn-raise-checks"


class InputDataError(Exception):
    r"""Exception raised when input data does not comply with conventions."""

    pass


class InputDataWarning(Warning):
    r"""Warning raised when input data does not comply with conventions."""

    pass


class _Flag:
    """Stand-in for botorch.settings.validate_input_scaling (a `_Flag` context manager)."""

    _state = True

    @classmethod
    def off(cls):
        return not cls._state


class settings:
    validate_input_scaling = _Flag


_NS = "wn_botorch"


def _raise_if_nan(Z_has_nan: Tensor) -> None:
    if Z_has_nan.item():
        raise InputDataError("Input data contains NaN values.")


def _raise_if_negative_variance(Yvar_has_negative: Tensor) -> None:
    if Yvar_has_negative.item():
        raise InputDataError("Input data contains negative variances.")


def _min_max_decision(Xmin: Tensor, Xmax: Tensor, atol: float, raise_on_fail: bool) -> None:
    msg = None
    if torch.any(Xmin < -atol) or torch.any(Xmax > 1 + atol):
        msg = "contained"
    if msg is not None:
        # NOTE: If you update this message, update the warning filters as well.
        # See https://github.com/meta-pytorch/botorch/pull/2508.
        msg = (
            f"Data (input features) is not {msg} to the unit cube. "
            "Please consider min-max scaling the input data."
        )
        if raise_on_fail:
            raise InputDataError(msg)
        warnings.warn(msg, InputDataWarning)  # stacklevel 1: inside the op, level 2 is torch


def _standardization_decision_single(Ymean: Tensor, mean_not_zero: Tensor, raise_on_fail: bool) -> None:
    if mean_not_zero:
        # NOTE: If you update this message, update the warning filters as well.
        # See https://github.com/meta-pytorch/botorch/pull/2508.
        msg = (
            f"Data (outcome observations) is not standardized (mean = {Ymean})."
            " Please consider scaling the input to zero mean and unit variance."
        )
        if raise_on_fail:
            raise InputDataError(msg)
        warnings.warn(msg, InputDataWarning)  # stacklevel 1: inside the op, level 2 is torch


def _standardization_decision(Ymean: Tensor, Ystd: Tensor, not_standardized: Tensor, raise_on_fail: bool) -> None:
    if not_standardized:
        # NOTE: If you update this message, update the warning filters as well.
        # See https://github.com/meta-pytorch/botorch/pull/2508.
        msg = (
            "Data (outcome observations) is not standardized "
            f"(std = {Ystd}, mean = {Ymean})."
            "Please consider scaling the input to zero mean and unit variance."
        )
        if raise_on_fail:
            raise InputDataError(msg)
        warnings.warn(msg, InputDataWarning)  # stacklevel 1: inside the op, level 2 is torch


for _name, _fn, _schema in (
    ("raise_if_nan", _raise_if_nan, "(Tensor Z_has_nan) -> ()"),
    ("raise_if_negative_variance", _raise_if_negative_variance, "(Tensor Yvar_has_negative) -> ()"),
    ("min_max_decision", _min_max_decision, "(Tensor Xmin, Tensor Xmax, float atol, bool raise_on_fail) -> ()"),
    ("standardization_decision_single", _standardization_decision_single,
     "(Tensor Ymean, Tensor mean_not_zero, bool raise_on_fail) -> ()"),
    ("standardization_decision", _standardization_decision,
     "(Tensor Ymean, Tensor Ystd, Tensor not_standardized, bool raise_on_fail) -> ()"),
):
    if not hasattr(getattr(torch.ops, _NS), _name):
        _op = torch.library.custom_op(f"{_NS}::{_name}", _fn, mutates_args=(), schema=_schema)
        _op.register_fake(lambda *args: None)
        _op.register_effect(EffectType.ORDERED)


def check_no_nans(Z: Tensor) -> None:
    r"""Check that tensor does not contain NaN values.

    Raises an InputDataError if `Z` contains NaN values.

    Args:
        Z: The input tensor.
    """
    torch.ops.wn_botorch.raise_if_nan(torch.any(torch.isnan(Z)))


def check_min_max_scaling(
    X: Tensor,
    strict: bool = False,
    atol: float = 1e-2,
    raise_on_fail: bool = False,
    ignore_dims: list[int] | None = None,
) -> None:
    r"""Check that tensor is normalized to the unit cube (the decision and its warning or error run
    in an ordered custom op; `strict=True` is not used by validate_input_scaling)."""
    if strict:
        raise NotImplementedError("strict=True is not part of this rewrite")
    ignore_dims = ignore_dims or []
    check_dims = list(set(range(X.shape[-1])) - set(ignore_dims))
    if len(check_dims) == 0:
        return None

    with torch.no_grad():
        X_check = X[..., check_dims]
        Xmin = torch.min(X_check, dim=-1).values
        Xmax = torch.max(X_check, dim=-1).values
        torch.ops.wn_botorch.min_max_decision(Xmin, Xmax, atol, raise_on_fail)


def check_standardization(
    Y: Tensor,
    atol_mean: float = 1e-2,
    atol_std: float = 1e-2,
    raise_on_fail: bool = False,
) -> None:
    r"""Check that tensor is standardized (zero mean, unit variance); the decision and its warning or
    error run in ordered custom ops."""
    with torch.no_grad():
        Ymean = torch.mean(Y, dim=-2)
        mean_not_zero = torch.abs(Ymean).max() > atol_mean
        if Y.shape[-2] <= 1:
            torch.ops.wn_botorch.standardization_decision_single(Ymean, mean_not_zero, raise_on_fail)
        else:
            Ystd = torch.std(Y, dim=-2)
            std_not_one = torch.abs(Ystd - 1).max() > atol_std
            torch.ops.wn_botorch.standardization_decision(
                Ymean, Ystd, mean_not_zero | std_not_one, raise_on_fail
            )


def validate_input_scaling(
    train_X: Tensor,
    train_Y: Tensor,
    train_Yvar: Tensor | None = None,
    raise_on_fail: bool = False,
    ignore_X_dims: list[int] | None = None,
    check_nans_only: bool = False,
) -> None:
    r"""Helper function to validate input data to models (see the case file)."""
    if settings.validate_input_scaling.off():
        return
    check_no_nans(train_X)
    check_no_nans(train_Y)
    if train_Yvar is not None:
        check_no_nans(train_Yvar)
        torch.ops.wn_botorch.raise_if_negative_variance(torch.any(train_Yvar < 0))
    if not check_nans_only:
        check_min_max_scaling(
            X=train_X, raise_on_fail=raise_on_fail, ignore_dims=ignore_X_dims
        )
        check_standardization(Y=train_Y, raise_on_fail=raise_on_fail)


def make():
    return validate_input_scaling


def _std(y):
    return (y - y.mean(dim=-2, keepdim=True)) / y.std(dim=-2, keepdim=True)


def inputs():
    g = torch.Generator().manual_seed(3)
    u = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)
    n = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
    return [
        (u(6, 2), _std(n(6, 1))),                              # clean: no warning
        (u(6, 2) * 3.0, _std(n(6, 1))),                        # X not in the unit cube: warns
        (u(6, 2), n(6, 1) * 2.0 + 1.0),                        # Y not standardized: warns (std, mean)
        (u(5, 3) * 2.0 - 0.5, n(5, 2) + 3.0, u(5, 2) * 0.1),   # both warn, with Yvar
        (u(1, 2), n(1, 1) + 2.0),                              # one observation, mean not zero: warns
        (u(1, 2), torch.zeros(1, 1, dtype=torch.float64)),     # one observation, mean zero
        (u(4, 2) * 5.0, n(4, 1) * 3.0, None, False, None, True),  # check_nans_only: no warning
        (u(4, 2) * 5.0, _std(n(4, 1)), u(4, 1), False, [0, 1]),   # X dims ignored
        (u(2, 6, 2), _std(n(2, 6, 1)), None, True),            # batched, raise_on_fail, clean
        (u(6, 2) - 0.2, _std(n(6, 1)), None, False, [1]),      # dim 0 below 0: warns
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(5)
    u = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)
    x_nan = u(4, 2)
    x_nan[1, 0] = float("nan")
    y_nan = _std(torch.randn(4, 1, generator=g, dtype=torch.float64))
    y_nan[2, 0] = float("nan")
    return [
        (x_nan, _std(torch.randn(4, 1, generator=g, dtype=torch.float64))),
        (u(4, 2), y_nan),
        (u(4, 2), _std(torch.randn(4, 1, generator=g, dtype=torch.float64)), u(4, 1) - 0.5),
        (u(4, 2) * 4.0, _std(torch.randn(4, 1, generator=g, dtype=torch.float64)), None, True),
        (u(4, 2), torch.randn(4, 1, generator=g, dtype=torch.float64) + 5.0, None, True),
    ]
