"""PyTorch3D Rotate transform (Transform3d subclass) applied to a point cloud: Rotate(R).transform_points(points).

Source: https://github.com/facebookresearch/pytorch3d/blob/v0.6.2/pytorch3d/transforms/transform3d.py
        (Rotate.__init__, _check_valid_rotation_matrix, Transform3d.transform_points, _broadcast_bmm;
        releases before the PYTORCH3D_CHECK_ROTATION_MATRICES=1 gate call the check unconditionally)
        https://github.com/facebookresearch/pytorch3d/blob/main/pytorch3d/transforms/transform3d.py (current, check gated)
Breaks: `_check_valid_rotation_matrix`: `torch.allclose(...)` returns a Python bool computed from tensor
        data (twice), and `if not (orthogonal and no_distortion): warnings.warn(msg)` branches on it.
        Transform3d is reduced to the matrix, get_matrix and transform_points.
HAND: the check is one torch.library.custom_op with an ORDERED effect that does the two allclose tests
      and emits the same warning at run time; the rest is unchanged.
"""
import warnings

import torch
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = "allclose bool -> warnings.warn"
GRAD = True


def _safe_det_3x3(t: torch.Tensor):
    det = (
        t[..., 0, 0] * (t[..., 1, 1] * t[..., 2, 2] - t[..., 1, 2] * t[..., 2, 1])
        - t[..., 0, 1] * (t[..., 1, 0] * t[..., 2, 2] - t[..., 2, 0] * t[..., 1, 2])
        + t[..., 0, 2] * (t[..., 1, 0] * t[..., 2, 1] - t[..., 2, 0] * t[..., 1, 1])
    )
    return det


def _broadcast_bmm(a, b):
    if a.dim() == 2:
        a = a[None]
    if len(a) != len(b):
        if not ((len(a) == 1) or (len(b) == 1)):
            msg = "Expected batch dim for bmm to be equal or 1; got %r, %r"
            raise ValueError(msg % (a.shape, b.shape))
        if len(a) == 1:
            a = a.expand(len(b), -1, -1)
        if len(b) == 1:
            b = b.expand(len(a), -1, -1)
    return a.bmm(b)


def _check_valid_rotation_matrix(R, tol: float = 1e-7) -> None:
    """
    Determine if R is a valid rotation matrix by checking it satisfies the
    following conditions:

    ``RR^T = I and det(R) = 1``

    Args:
        R: an (N, 3, 3) matrix

    Returns:
        None

    Emits a warning if R is an invalid rotation matrix.
    """
    _check_valid_rotation_matrix_op(R, tol)
    return


@torch.library.custom_op("wx_pytorch3d::check_valid_rotation_matrix", mutates_args=())
def _check_valid_rotation_matrix_op(R: torch.Tensor, tol: float) -> None:
    N = R.shape[0]
    eye = torch.eye(3, dtype=R.dtype, device=R.device)
    eye = eye.view(1, 3, 3).expand(N, -1, -1)
    orthogonal = torch.allclose(R.bmm(R.transpose(1, 2)), eye, atol=tol)
    det_R = _safe_det_3x3(R)
    no_distortion = torch.allclose(det_R, torch.ones_like(det_R))
    if not (orthogonal and no_distortion):
        msg = "R is not a valid rotation matrix"
        warnings.warn(msg)


@_check_valid_rotation_matrix_op.register_fake
def _(R, tol):
    return None


_register_effectful_op(torch.ops.wx_pytorch3d.check_valid_rotation_matrix.default, _EffectType.ORDERED)


class Transform3d:
    def __init__(self, dtype=torch.float32, device="cpu", matrix=None):
        if matrix is None:
            self._matrix = torch.eye(4, dtype=dtype, device=device).view(1, 4, 4)
        else:
            self._matrix = matrix.view(-1, 4, 4)
        self.device = device
        self.dtype = dtype

    def get_matrix(self):
        return self._matrix

    def transform_points(self, points, eps=None):
        points_batch = points.clone()
        if points_batch.dim() == 2:
            points_batch = points_batch[None]  # (P, 3) -> (1, P, 3)
        if points_batch.dim() != 3:
            msg = "Expected points to have dim = 2 or dim = 3: got shape %r"
            raise ValueError(msg % repr(points.shape))

        N, P, _3 = points_batch.shape
        ones = torch.ones(N, P, 1, dtype=points.dtype, device=points.device)
        points_batch = torch.cat([points_batch, ones], dim=2)

        composed_matrix = self.get_matrix()
        points_out = _broadcast_bmm(points_batch, composed_matrix)
        denom = points_out[..., 3:]  # denominator
        if eps is not None:
            denom_sign = denom.sign() + (denom == 0.0).type_as(denom)
            denom = denom_sign * torch.clamp(denom.abs(), eps)
        points_out = points_out[..., :3] / denom

        # When transform is (1, 4, 4) and points is (P, 3) return
        # points_out of shape (P, 3)
        if points_out.shape[0] == 1 and points.dim() == 2:
            points_out = points_out.reshape(points.shape)

        return points_out


class Rotate(Transform3d):
    def __init__(self, R, dtype=torch.float32, device="cpu", orthogonal_tol: float = 1e-5):
        super().__init__(device=device)
        if R.dim() == 2:
            R = R[None]
        if R.shape[-2:] != (3, 3):
            msg = "R must have shape (3, 3) or (N, 3, 3); got %s"
            raise ValueError(msg % repr(R.shape))
        R = R.to(dtype=dtype).to(device=device)
        _check_valid_rotation_matrix(R, tol=orthogonal_tol)
        N = R.shape[0]
        mat = torch.eye(4, dtype=dtype, device=device)
        mat = mat.view(1, 4, 4).repeat(N, 1, 1)
        mat[:, :3, :3] = R
        self._matrix = mat


def rotate_points(R, points):
    return Rotate(R).transform_points(points)


def make():
    return rotate_points


def _rot(g, n):
    q = torch.randn(n, 4, generator=g)
    q = q / q.norm(dim=-1, keepdim=True)
    r, i, j, k = q.unbind(-1)
    return torch.stack([
        1 - 2 * (j * j + k * k), 2 * (i * j - k * r), 2 * (i * k + j * r),
        2 * (i * j + k * r), 1 - 2 * (i * i + k * k), 2 * (j * k - i * r),
        2 * (i * k - j * r), 2 * (j * k + i * r), 1 - 2 * (i * i + j * j)], -1).view(n, 3, 3)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(8):
        n = 1 + i % 3
        R = _rot(g, n)
        if i in (2, 5):
            R = R * 1.1  # scaled: not a rotation -> warning
        if i == 6:
            R = R.clone()
            R[..., 0, :] = -R[..., 0, :]  # reflection: orthogonal but det = -1 -> warning
        if i == 3:
            R = R[0]  # (3, 3)
            pts = torch.randn(5, 3, generator=g)
        else:
            pts = torch.randn(n, 4, 3, generator=g)
        out.append((R, pts))
    return out
