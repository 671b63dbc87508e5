"""PyTorch3D `so3_relative_angle`: geodesic angle between batches of rotation matrices (a camera-pose
rotation loss), via `so3_rotation_angle` and `acos_linear_extrapolation`.

Sources: https://github.com/facebookresearch/pytorch3d/blob/main/pytorch3d/transforms/so3.py
(so3_relative_angle, so3_rotation_angle) and
https://github.com/facebookresearch/pytorch3d/blob/main/pytorch3d/transforms/math.py
(acos_linear_extrapolation, _acos_linear_approximation, _dacos_dx).

Breaks: `if ((rot_trace < -1.0 - eps) + (rot_trace > 3.0 + eps)).any(): raise ValueError(...)`
(data-dependent check) and the boolean-mask gathers/assignments
`acos_extrap[x_mid] = torch.acos(x[x_mid])`, `acos_extrap[x_upper] = ...(x[x_upper], ...)`,
`acos_extrap[x_lower] = ...(x[x_lower], ...)` (dynamic shapes).

HAND: the trace check runs in an ordered custom op (`ws_p3d::check_trace`) that raises the same
ValueError at run time; the three masked pieces are computed on the whole tensor and combined with
`torch.where`, `acos` taking a safe operand (0) outside the middle domain so no NaN reaches values or
gradients.
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

    # init an empty tensor and define the domain sets
    acos_extrap = torch.empty_like(x)
    x_upper = x >= upper_bound
    x_lower = x <= lower_bound
    x_mid = (~x_upper) & (~x_lower)

    # acos calculation for upper_bound < x < lower_bound
    acos_extrap[x_mid] = torch.acos(x[x_mid])
    # the linear extrapolation for x >= upper_bound
    acos_extrap[x_upper] = _acos_linear_approximation(x[x_upper], upper_bound)
    # the linear extrapolation for x <= lower_bound
    acos_extrap[x_lower] = _acos_linear_approximation(x[x_lower], lower_bound)

    return acos_extrap


def so3_rotation_angle(R, eps=1e-4, cos_angle=False, cos_bound=1e-4):
    N, dim1, dim2 = R.shape
    if dim1 != 3 or dim2 != 3:
        raise ValueError("Input has to be a batch of 3x3 Tensors.")

    rot_trace = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]

    if ((rot_trace < -1.0 - eps) + (rot_trace > 3.0 + eps)).any():
        raise ValueError("A matrix has trace outside valid range [-1-eps,3+eps].")

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
