"""torchmetrics functional tweedie_deviance_score (with its _safe_xlogy helper).

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/tweedie_deviance.py
        (_tweedie_deviance_score_update / _tweedie_deviance_score_compute), and
        https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/utilities/compute.py (_safe_xlogy)

Breaks: `if torch.any(preds <= 0) or torch.any(targets < 0): raise ValueError(...)` is a
data-dependent branch on a tensor (one site per power branch reached). (`_safe_xlogy`'s
boolean-mask assignment `res[x == 0] = 0.0` is traced by dynamo on 2.13 and does not break.)

HAND: the domain checks become one ordered custom op (torch.library.custom_op + ORDERED effect) that
raises the same ValueError with the same message at run time; `_safe_xlogy` uses torch.where.
"""
from typing import Tuple

import torch
from torch import Tensor

KIND = "data-dependent raise"


def _check_same_shape(preds: Tensor, target: Tensor) -> None:
    if preds.shape != target.shape:
        raise RuntimeError(
            f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}."
        )


def _safe_xlogy(x: Tensor, y: Tensor) -> Tensor:
    res = x * torch.log(y)
    res[x == 0] = 0.0
    return res


def _tweedie_deviance_score_update(preds: Tensor, targets: Tensor, power: float = 0.0) -> Tuple[Tensor, Tensor]:
    _check_same_shape(preds, targets)

    zero_tensor = torch.zeros(preds.shape, device=preds.device)

    if 0 < power < 1:
        raise ValueError(f"Deviance Score is not defined for power={power}.")

    if power == 0:
        deviance_score = torch.pow(targets - preds, exponent=2)
    elif power == 1:
        # Poisson distribution
        if torch.any(preds <= 0) or torch.any(targets < 0):
            raise ValueError(
                f"For power={power}, 'preds' has to be strictly positive and 'targets' cannot be negative."
            )

        deviance_score = 2 * (_safe_xlogy(targets, targets / preds) + preds - targets)
    elif power == 2:
        # Gamma distribution
        if torch.any(preds <= 0) or torch.any(targets <= 0):
            raise ValueError(f"For power={power}, both 'preds' and 'targets' have to be strictly positive.")

        deviance_score = 2 * (torch.log(preds / targets) + (targets / preds) - 1)
    else:
        if power < 0:
            if torch.any(preds <= 0):
                raise ValueError(f"For power={power}, 'preds' has to be strictly positive.")
        elif 1 < power < 2:
            if torch.any(preds <= 0) or torch.any(targets < 0):
                raise ValueError(
                    f"For power={power}, 'targets' has to be strictly positive and 'preds' cannot be negative."
                )
        else:
            if torch.any(preds <= 0) or torch.any(targets <= 0):
                raise ValueError(f"For power={power}, both 'preds' and 'targets' have to be strictly positive.")

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
        (_pos(1), t_with_zero, 1.0),                 # Poisson, zero targets -> _safe_xlogy mask
        (_pos(2), _pos(3), 1.0),                     # Poisson, no zeros
        (_pos(4), _pos(5), 2.0),                     # Gamma
        (_pos(6), _pos(7), 0.0),                     # Normal: no check
        (_pos(8), _pos(9) - 1.0, -0.5),              # power < 0: only preds checked
        (_pos(10), t_with_zero, 1.5),                # compound Poisson
        (_pos(11), _pos(12), 3.0),                   # inverse Gaussian
        (torch.rand(2, 3) + 0.5, torch.rand(2, 3) + 0.5, 2.5),
    ]


def failing_inputs():
    return [
        (_pos(1) - 2.0, _pos(2), 1.0),               # Poisson, non-positive preds
        (_pos(1), -_pos(2), 2.0),                    # Gamma, negative targets
        (-_pos(1), _pos(2), -1.0),                   # power < 0, negative preds
        (_pos(1), -_pos(2), 1.2),                    # compound Poisson, negative targets
        (_pos(1), torch.zeros(6), 3.0),              # inverse Gaussian, zero targets
        (_pos(1), _pos(2), 0.5),                     # undefined power
        (_pos(1), _pos(2, 5), 0.0),                  # shape mismatch
    ]
