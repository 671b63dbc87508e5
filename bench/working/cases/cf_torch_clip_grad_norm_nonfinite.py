"""`torch.nn.utils.clip_grad_norm_(..., error_if_nonfinite=True)`: the total norm is tested with
`if error_if_nonfinite and torch.logical_or(total_norm.isnan(), total_norm.isinf()): raise
RuntimeError(...)` before the gradients are scaled in place.

Source: https://github.com/pytorch/pytorch/blob/main/torch/nn/utils/clip_grad.py
(`clip_grad_norm_`, `_get_total_norm`, `_clip_grads_with_norm_`), reduced to the per-tensor
(non-foreach) path on a list of gradient tensors, as a training step that clips before the update
would call it.

Breaks: `torch.logical_or(total_norm.isnan(), total_norm.isinf())` used as a Python bool
(data-dependent branching).

HAND: the test and the raise move into a `torch.library.custom_op` with an ORDERED effect that
raises the same RuntimeError (same text) at run time, before the in-place scaling.
"""
from typing import List

import torch
from torch import Tensor

KIND = "branch-raise"


def _get_total_norm(tensors: List[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return torch.tensor(0.0)
    first_device = tensors[0].device
    norms = [torch.linalg.vector_norm(g, norm_type) for g in tensors]
    total_norm = torch.linalg.vector_norm(
        torch.stack([norm.to(first_device) for norm in norms]), norm_type
    )

    if error_if_nonfinite and torch.logical_or(total_norm.isnan(), total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total_norm


def _clip_grads_with_norm_(grads: List[Tensor], max_norm: float, total_norm: Tensor) -> None:
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef = max_norm / (total_norm + 1e-6)
    # Note: multiplying by the clamped coef is redundant when the coef is clamped to 1, but doing so
    # avoids a `if clip_coef < 1:` conditional which can require a CPU <=> device synchronization
    # when the gradients do not reside in CPU memory.
    clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@torch.no_grad()
def clip_grad_norm_(grads: List[Tensor], max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite)
    _clip_grads_with_norm_(grads, max_norm, total_norm)
    return total_norm


def make():
    return clip_grad_norm_


def inputs():
    torch.manual_seed(0)
    g = lambda: [torch.randn(3, 4), torch.randn(4), torch.randn(2, 2)]
    nan_grads = g()
    nan_grads[1][0] = float("nan")
    return [
        (g(), 1.0, 2.0, True),
        (g(), 100.0, 2.0, True),
        (g(), 0.5, float("inf"), True),
        (g(), 1.0, 1.0, True),
        ([t * 1e3 for t in g()], 5.0, 2.0, True),
        (nan_grads, 1.0, 2.0, False),          # non-finite but no error requested: scaled by NaN
        ([], 1.0, 2.0, True),
        ([torch.zeros(5)], 1.0, 2.0, True),
    ]


def failing_inputs():
    torch.manual_seed(1)
    grads = [torch.randn(3, 4), torch.randn(4)]
    grads[0][1, 1] = float("inf")
    grads2 = [torch.randn(3), torch.randn(2)]
    grads2[1][0] = float("nan")
    return [(grads, 1.0, 2.0, True), (grads2, 1.0, float("inf"), True)]
