"""torchmetrics functional tweedie_deviance_score — hand rewrite.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/tweedie_deviance.py

HAND: the tensor-valued domain checks run inside an ordered custom op that raises the same ValueError;
`_safe_xlogy` uses torch.where instead of the boolean-mask assignment.
"""
from typing import Tuple

import torch
from torch import Tensor
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = "data-dependent raise"

_NS = "wt_tweedie"
if not hasattr(torch.ops, _NS) or not hasattr(getattr(torch.ops, _NS), "check"):

    @torch.library.custom_op(f"{_NS}::check", mutates_args=())
    def _check_op(bad: Tensor, msg: str) -> None:
        if bool(bad):
            raise ValueError(msg)

    @_check_op.register_fake
    def _(bad, msg):
        return None

    _register_effectful_op(getattr(torch.ops, _NS).check.default, _EffectType.ORDERED)


def _check(bad: Tensor, msg: str) -> None:
    getattr(torch.ops, _NS).check(bad, msg)


def _check_same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise RuntimeError(
            f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}."
        )


def _safe_xlogy(x: Tensor, y: Tensor) -> Tensor:
    res = x * torch.log(y)
    return torch.where(x == 0, torch.zeros_like(res), res)


def _tweedie_deviance_score_update(preds: Tensor, targets: Tensor, power: float = 0.0) -> Tuple[Tensor, Tensor]:
    _check_same_shape(preds, targets)

    zero_tensor = torch.zeros(preds.shape, device=preds.device)

    if 0 < power < 1:
        raise ValueError(f"Deviance Score is not defined for power={power}.")

    if power == 0:
        deviance_score = torch.pow(targets - preds, exponent=2)
    elif power == 1:
        _check(
            torch.any(preds <= 0) | torch.any(targets < 0),
            f"For power={power}, 'preds' has to be strictly positive and 'targets' cannot be negative.",
        )
        deviance_score = 2 * (_safe_xlogy(targets, targets / preds) + preds - targets)
    elif power == 2:
        _check(
            torch.any(preds <= 0) | torch.any(targets <= 0),
            f"For power={power}, both 'preds' and 'targets' have to be strictly positive.",
        )
        deviance_score = 2 * (torch.log(preds / targets) + (targets / preds) - 1)
    else:
        if power < 0:
            _check(torch.any(preds <= 0), f"For power={power}, 'preds' has to be strictly positive.")
        elif 1 < power < 2:
            _check(
                torch.any(preds <= 0) | torch.any(targets < 0),
                f"For power={power}, 'targets' has to be strictly positive and 'preds' cannot be negative.",
            )
        else:
            _check(
                torch.any(preds <= 0) | torch.any(targets <= 0),
                f"For power={power}, both 'preds' and 'targets' have to be strictly positive.",
            )

        term_1 = torch.pow(torch.max(targets, zero_tensor), 2 - power) / ((1 - power) * (2 - power))
        term_2 = targets * torch.pow(preds, 1 - power) / (1 - power)
        term_3 = torch.pow(preds, 2 - power) / (2 - power)
        deviance_score = 2 * (term_1 - term_2 + term_3)

    sum_deviance_score = torch.sum(deviance_score)
    num_observations = torch.tensor(torch.numel(deviance_score), device=preds.device)

    return sum_deviance_score, num_observations


def _tweedie_deviance_score_compute(sum_deviance_score: Tensor, num_observations: Tensor) -> Tensor:
    return sum_deviance_score / num_observations


def tweedie_deviance_score(preds: Tensor, targets: Tensor, power: float = 0.0) -> Tensor:
    sum_deviance_score, num_observations = _tweedie_deviance_score_update(preds, targets, power=power)
    return _tweedie_deviance_score_compute(sum_deviance_score, num_observations)


def make():
    return tweedie_deviance_score


def _pos(seed, n=6):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, generator=g) * 3 + 0.1


def inputs():
    t_with_zero = torch.tensor([0.0, 1.0, 2.0, 0.0, 3.0, 4.0])
    return [
        (_pos(1), t_with_zero, 1.0),
        (_pos(2), _pos(3), 1.0),
        (_pos(4), _pos(5), 2.0),
        (_pos(6), _pos(7), 0.0),
        (_pos(8), _pos(9) - 1.0, -0.5),
        (_pos(10), t_with_zero, 1.5),
        (_pos(11), _pos(12), 3.0),
        (torch.rand(2, 3) + 0.5, torch.rand(2, 3) + 0.5, 2.5),
    ]


def failing_inputs():
    return [
        (_pos(1) - 2.0, _pos(2), 1.0),
        (_pos(1), -_pos(2), 2.0),
        (-_pos(1), _pos(2), -1.0),
        (_pos(1), -_pos(2), 1.2),
        (_pos(1), torch.zeros(6), 3.0),
        (_pos(1), _pos(2), 0.5),
        (_pos(1), _pos(2, 5), 0.0),
    ]
