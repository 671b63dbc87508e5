"""PyTorch3D `so3_relative_angle` — hand rewrite.

Sources: https://github.com/facebookresearch/pytorch3d/blob/main/pytorch3d/transforms/so3.py and
pytorch3d/transforms/math.py

HAND: the trace check runs in an ordered custom op (`ws_p3d::check_trace`) raising the same ValueError;
`acos_linear_extrapolation` computes the three pieces on the whole tensor and selects with
`torch.where`, `acos` taking 0 outside the middle domain (finite values and gradients in the
unselected lanes; NaN inputs stay NaN as in the source).
"""
import math

import torch

KIND = "value check + mask assign"
GRAD = True

DEFAULT_ACOS_BOUND = 1.0 - 1e-4


def _dacos_dx(x):
    """Calculates the derivative of `arccos(x)` w.r.t. `x`."""
    return (-1.0) / math.sqrt(1.0 - x * x)


def _acos_linear_approximation(x, x0):
    """Calculates the 1st order Taylor expansion of `arccos(x)` around `x0`."""
    return (x - x0) * _dacos_dx(x0) + math.acos(x0)


def acos_linear_extrapolation(x, bounds=(-DEFAULT_ACOS_BOUND, DEFAULT_ACOS_BOUND)):
    lower_bound, upper_bound = bounds

    if lower_bound > upper_bound:
        raise ValueError("lower bound has to be smaller or equal to upper bound.")

    if lower_bound <= -1.0 or upper_bound >= 1.0:
        raise ValueError("Both lower bound and upper bound have to be within (-1, 1).")

    x_upper = x >= upper_bound
    x_lower = x <= lower_bound
    x_mid = (~x_upper) & (~x_lower)

    mid = torch.acos(torch.where(x_mid, x, torch.zeros_like(x)))
    upper = _acos_linear_approximation(x, upper_bound)
    lower = _acos_linear_approximation(x, lower_bound)
    return torch.where(x_upper, upper, torch.where(x_lower, lower, mid))


@torch.library.custom_op("ws_p3d::check_trace", mutates_args=())
def _check_trace(rot_trace: torch.Tensor, eps: float) -> None:
    if ((rot_trace < -1.0 - eps) + (rot_trace > 3.0 + eps)).any():
        raise ValueError("A matrix has trace outside valid range [-1-eps,3+eps].")


@_check_trace.register_fake
def _(rot_trace, eps):
    return None


torch.library._register_effectful_op("ws_p3d::check_trace", torch.library.EffectType.ORDERED)


def so3_rotation_angle(R, eps=1e-4, cos_angle=False, cos_bound=1e-4):
    N, dim1, dim2 = R.shape
    if dim1 != 3 or dim2 != 3:
        raise ValueError("Input has to be a batch of 3x3 Tensors.")

    rot_trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]

    _check_trace(rot_trace.detach(), eps)

    # phi ... rotation angle
    phi_cos = (rot_trace - 1.0) * 0.5

    if cos_angle:
        return phi_cos
    else:
        if cos_bound > 0.0:
            bound = 1.0 - cos_bound
            return acos_linear_extrapolation(phi_cos, (-bound, bound))
        else:
            return torch.acos(phi_cos)


def so3_relative_angle(R1, R2, cos_angle=False, cos_bound=1e-4, eps=1e-4):
    R12 = torch.bmm(R1, R2.permute(0, 2, 1))
    return so3_rotation_angle(R12, cos_angle=cos_angle, cos_bound=cos_bound, eps=eps)


def make():
    return so3_relative_angle


def _rotations(axis_angle):
    # Rodrigues' formula (test-data helper only)
    theta = axis_angle.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    k = axis_angle / theta
    K = torch.zeros(axis_angle.shape[0], 3, 3, dtype=axis_angle.dtype)
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = k[:, 2], -k[:, 1], k[:, 0]
    s, c = torch.sin(theta)[..., None], torch.cos(theta)[..., None]
    eye = torch.eye(3, dtype=axis_angle.dtype).expand_as(K)
    return eye + s * K + (1 - c) * (K @ K)


def inputs():
    torch.manual_seed(0)
    R1 = _rotations(torch.randn(4, 3))
    R2 = _rotations(torch.randn(4, 3))
    flip = _rotations(torch.tensor([[math.pi, 0.0, 0.0], [0.0, math.pi, 0.0]]))
    eye2 = torch.eye(3).expand(2, 3, 3).clone()
    return [
        (R1, R2),
        (R1, R1.clone()),  # identical: cos -> 1, upper extrapolation
        (flip, eye2),  # 180 degrees: cos -> -1, lower extrapolation
        (torch.cat([R1[:2], flip]), torch.cat([R1[:2].clone(), eye2])),  # mixed domains
        (R1, R2, True),  # cos_angle
        (R1, R2, False, 0.0),  # plain acos
        (R1, R2, False, 1e-2),
        (_rotations(torch.randn(3, 3, dtype=torch.float64)), _rotations(torch.randn(3, 3, dtype=torch.float64))),
    ]


def failing_inputs():
    torch.manual_seed(0)
    return [(2.0 * torch.eye(3).expand(2, 3, 3).clone(), torch.eye(3).expand(2, 3, 3).clone())]
