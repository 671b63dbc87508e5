"""torchmetrics functional `explained_variance`: per-output 1 - Var(target - preds) / Var(target), with
explicit handling of zero numerators/denominators through boolean-mask assignment.

Source: https://github.com/Lightning-AI/torchmetrics/blob/master/src/torchmetrics/functional/regression/explained_variance.py
(_explained_variance_update, _explained_variance_compute, explained_variance).
`_check_same_shape` is inlined.

Breaks: `output_scores[valid_score] = 1.0 - (numerator[valid_score] / denominator[valid_score])` gathers
with a boolean mask (`numerator[valid_score]`: dynamic output shape).

HAND: `torch.where(valid_score, 1.0 - numerator / safe_denominator, output_scores)` with the
denominator replaced by 1 where it is zero (so the unselected lanes are finite, values and gradients),
and `torch.where` for the `0.0` assignment.
"""
import torch

KIND = "boolean-mask gather/assign"
GRAD = True


def _explained_variance_update(preds, target):
    if preds.shape != target.shape:
        raise RuntimeError(
            f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}."
        )
    num_obs = preds.size(0)
    sum_error = torch.sum(target - preds, dim=0)
    diff = target - preds
    sum_squared_error = torch.sum(diff * diff, dim=0)

    sum_target = torch.sum(target, dim=0)
    sum_squared_target = torch.sum(target * target, dim=0)

    return num_obs, sum_error, sum_squared_error, sum_target, sum_squared_target


def _explained_variance_compute(
    num_obs, sum_error, sum_squared_error, sum_target, sum_squared_target, multioutput="uniform_average"
):
    diff_avg = sum_error / num_obs
    numerator = sum_squared_error / num_obs - (diff_avg * diff_avg)

    target_avg = sum_target / num_obs
    denominator = sum_squared_target / num_obs - (target_avg * target_avg)

    # Take care of division by zero
    nonzero_numerator = numerator != 0
    nonzero_denominator = denominator != 0
    valid_score = nonzero_numerator & nonzero_denominator
    output_scores = torch.ones_like(diff_avg)
    output_scores[valid_score] = 1.0 - (numerator[valid_score] / denominator[valid_score])
    output_scores[nonzero_numerator & ~nonzero_denominator] = 0.0

    # Decide what to do in multioutput case
    # Todo: allow user to pass in tensor with weights
    if multioutput == "raw_values":
        return output_scores
    if multioutput == "uniform_average":
        return torch.mean(output_scores)
    denom_sum = torch.sum(denominator)
    return torch.sum(denominator / denom_sum * output_scores)


def explained_variance(preds, target, multioutput="uniform_average"):
    allowed = ("raw_values", "uniform_average", "variance_weighted")
    if multioutput not in allowed:
        raise ValueError(f"Invalid input to argument `multioutput`. Choose one of the following: {allowed}")
    num_obs, sum_error, ss_error, sum_target, ss_target = _explained_variance_update(preds, target)
    return _explained_variance_compute(num_obs, sum_error, ss_error, sum_target, ss_target, multioutput)


def make():
    return explained_variance


def inputs():
    torch.manual_seed(0)
    p, t = torch.randn(8, 3), torch.randn(8, 3)
    const_t = t.clone()
    const_t[:, 1] = 2.0  # zero denominator in column 1
    exact = t.clone()
    exact[:, 0] = p[:, 0] + 1.0  # zero numerator in column 0 (error is constant)
    return [
        (p, t, "raw_values"),
        (p, t),
        (p, t, "variance_weighted"),
        (p, const_t, "raw_values"),
        (p, exact, "raw_values"),
        (torch.tensor([0.0, 2.0, -1.0, 8.0]), torch.tensor([0.5, 1.0, -1.0, 7.0])),
        (torch.tensor([[0.5, 1.0], [-1.0, 1.0], [7.0, -6.0]]), torch.tensor([[0.0, 2.0], [-1.0, 2.0], [8.0, -5.0]]), "raw_values"),
        (p[:, :2], exact[:, :2], "variance_weighted"),
        (torch.randn(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)),
    ]


def failing_inputs():
    return [(torch.randn(4), torch.randn(5)), (torch.randn(4), torch.randn(4), "mean")]
