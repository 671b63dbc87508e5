"""BoTorch's training-data validation (`validate_input_scaling`), called in the constructor of
the standard GP models (`SingleTaskGP.__init__` etc.) on the transformed training data: it raises
`InputDataError` if the inputs, targets or observed noise contain NaN or the noise is negative, warns
(`InputDataWarning`, or raises with `raise_on_fail=True`) when the inputs are not contained in the
unit cube, and warns when the targets are not standardized, with their mean and std in the message.

Source: https://github.com/pytorch/botorch/blob/e390e135c5327f832275d69ac485d7844e68e234/botorch/models/utils/assorted.py
(`check_no_nans`, `check_min_max_scaling`, `check_standardization`, `validate_input_scaling`).
Reduced: `botorch.settings.validate_input_scaling` is a stand-in whose `off()` is False (the default);
`InputDataError`/`InputDataWarning` are defined here as in botorch/exceptions. Tiny n x d data.

Breaks: `if torch.any(torch.isnan(Z)).item():` (`.item()`, for X, Y and Yvar),
`if torch.any(train_Yvar < 0):`, `if torch.any(Xmin < -atol) or torch.any(Xmax > 1 + atol):`,
`if mean_not_zero:` (single observation) and `if mean_not_zero or std_not_one:` (branches on tensors
that raise or warn), and the three `warnings.warn(msg, InputDataWarning, stacklevel=2)` calls
(8 sites).

HAND: the reductions (NaN tests, Xmin/Xmax, mean/std) stay in the graph; each decision and its raise
or warning runs in a `torch.library.custom_op` with an ORDERED effect that receives those tensors and
raises/warns eagerly with the same class and the same text (the mean and std are formatted from the
same tensors; the warning is issued at stacklevel 1, since at level 2 it would be attributed to torch's
op dispatch instead of the caller). Removes every site.
"""
import warnings

import torch
from torch import Tensor

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


def check_no_nans(Z: Tensor) -> None:
    r"""Check that tensor does not contain NaN values.

    Raises an InputDataError if `Z` contains NaN values.

    Args:
        Z: The input tensor.
    """
    if torch.any(torch.isnan(Z)).item():
        raise InputDataError("Input data contains NaN values.")


def check_min_max_scaling(
    X: Tensor,
    strict: bool = False,
    atol: float = 1e-2,
    raise_on_fail: bool = False,
    ignore_dims: list[int] | None = None,
) -> None:
    r"""Check that tensor is normalized to the unit cube.

    Args:
        X: A `batch_shape x n x d` input tensor. Typically the training inputs
            of a model.
        strict: If True, require `X` to be scaled to the unit cube (rather than
            just to be contained within the unit cube).
        atol: The tolerance for the boundary check. Only used if `strict=True`.
        raise_on_fail: If True, raise an exception instead of a warning.
        ignore_dims: Subset of dimensions where the min-max scaling check is omitted.
    """
    ignore_dims = ignore_dims or []
    check_dims = list(set(range(X.shape[-1])) - set(ignore_dims))
    if len(check_dims) == 0:
        return None

    with torch.no_grad():
        X_check = X[..., check_dims]
        Xmin = torch.min(X_check, dim=-1).values
        Xmax = torch.max(X_check, dim=-1).values
        msg = None
        if strict and max(torch.abs(Xmin).max(), torch.abs(Xmax - 1).max()) > atol:
            msg = "scaled"
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
            warnings.warn(msg, InputDataWarning, stacklevel=2)


def check_standardization(
    Y: Tensor,
    atol_mean: float = 1e-2,
    atol_std: float = 1e-2,
    raise_on_fail: bool = False,
) -> None:
    r"""Check that tensor is standardized (zero mean, unit variance).

    Args:
        Y: The input tensor of shape `batch_shape x n x m`. Typically the
            train targets of a model. Standardization is checked across the
            `n`-dimension.
        atol_mean: The tolerance for the mean check.
        atol_std: The tolerance for the std check.
        raise_on_fail: If True, raise an exception instead of a warning.
    """
    with torch.no_grad():
        Ymean = torch.mean(Y, dim=-2)
        mean_not_zero = torch.abs(Ymean).max() > atol_mean
        if Y.shape[-2] <= 1:
            if mean_not_zero:
                # NOTE: If you update this message, update the warning filters as well.
                # See https://github.com/meta-pytorch/botorch/pull/2508.
                msg = (
                    f"Data (outcome observations) is not standardized (mean = {Ymean})."
                    " Please consider scaling the input to zero mean and unit variance."
                )
                if raise_on_fail:
                    raise InputDataError(msg)
                warnings.warn(msg, InputDataWarning, stacklevel=2)
        else:
            Ystd = torch.std(Y, dim=-2)
            std_not_one = torch.abs(Ystd - 1).max() > atol_std
            if mean_not_zero or std_not_one:
                # NOTE: If you update this message, update the warning filters as well.
                # See https://github.com/meta-pytorch/botorch/pull/2508.
                msg = (
                    "Data (outcome observations) is not standardized "
                    f"(std = {Ystd}, mean = {Ymean})."
                    "Please consider scaling the input to zero mean and unit variance."
                )
                if raise_on_fail:
                    raise InputDataError(msg)
                warnings.warn(msg, InputDataWarning, stacklevel=2)


def validate_input_scaling(
    train_X: Tensor,
    train_Y: Tensor,
    train_Yvar: Tensor | None = None,
    raise_on_fail: bool = False,
    ignore_X_dims: list[int] | None = None,
    check_nans_only: bool = False,
) -> None:
    r"""Helper function to validate input data to models.

    This function is typically called inside the constructor of standard BoTorch
    models. It validates the following:
    (i) none of the inputs contain NaN values
    (ii) the training data (`train_X`) is normalized to the unit cube for all
    dimensions except those in `ignore_X_dims`.
    (iii) the training targets (`train_Y`) are standardized (zero mean, unit var)
    No checks (other than the NaN check) are performed for observed variances
    (`train_Yvar`) at this point.
    """
    if settings.validate_input_scaling.off():
        return
    check_no_nans(train_X)
    check_no_nans(train_Y)
    if train_Yvar is not None:
        check_no_nans(train_Yvar)
        if torch.any(train_Yvar < 0):
            raise InputDataError("Input data contains negative variances.")
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
