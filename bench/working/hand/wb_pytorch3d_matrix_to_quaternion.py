"""Hand rewrite of cases/wb_pytorch3d_matrix_to_quaternion.py: `torch.where` with a safe operand
in `_sqrt_positive_part`, and `torch.gather` at the argmax instead of the one-hot boolean mask."""

import torch
import torch.nn.functional as F

KIND = "dynamic-shape"
GRAD = True


def quaternion_to_matrix(quaternions: torch.Tensor) -> torch.Tensor:
    r, i, j, k = torch.unbind(quaternions, -1)
    two_s = 2.0 / (quaternions * quaternions).sum(-1)
    o = torch.stack(
        (
            1 - two_s * (j * j + k * k), two_s * (i * j - k * r), two_s * (i * k + j * r),
            two_s * (i * j + k * r), 1 - two_s * (i * i + k * k), two_s * (j * k - i * r),
            two_s * (i * k - j * r), two_s * (j * k + i * r), 1 - two_s * (i * i + j * j),
        ),
        -1,
    )
    return o.reshape(quaternions.shape[:-1] + (3, 3))


def _sqrt_positive_part(x: torch.Tensor) -> torch.Tensor:
    """
    Returns torch.sqrt(torch.max(0, x))
    but with a zero subgradient where x is 0.
    """
    ret = torch.zeros_like(x)
    positive_mask = x > 0
    if torch.is_grad_enabled():
        # same values, and the same gradient (0.5 / sqrt(x) where x > 0, 0 elsewhere): the inner
        # where keeps sqrt away from non-positive entries, so no NaN/inf reaches the gradient
        ret = torch.where(positive_mask, torch.sqrt(torch.where(positive_mask, x, torch.ones_like(x))), ret)
    else:
        ret = torch.where(positive_mask, torch.sqrt(x), ret)
    return ret


def standardize_quaternion(quaternions: torch.Tensor) -> torch.Tensor:
    return torch.where(quaternions[..., 0:1] < 0, -quaternions, quaternions)


def matrix_to_quaternion(matrix: torch.Tensor) -> torch.Tensor:
    if matrix.size(-1) != 3 or matrix.size(-2) != 3:
        raise ValueError(f"Invalid rotation matrix shape {matrix.shape}.")

    batch_dim = matrix.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.unbind(
        matrix.reshape(batch_dim + (9,)), dim=-1
    )

    q_abs = _sqrt_positive_part(
        torch.stack(
            [
                1.0 + m00 + m11 + m22,
                1.0 + m00 - m11 - m22,
                1.0 - m00 + m11 - m22,
                1.0 - m00 - m11 + m22,
            ],
            dim=-1,
        )
    )

    # we produce the desired quaternion multiplied by each of r, i, j, k
    quat_by_rijk = torch.stack(
        [
            torch.stack([q_abs[..., 0] ** 2, m21 - m12, m02 - m20, m10 - m01], dim=-1),
            torch.stack([m21 - m12, q_abs[..., 1] ** 2, m10 + m01, m02 + m20], dim=-1),
            torch.stack([m02 - m20, m10 + m01, q_abs[..., 2] ** 2, m12 + m21], dim=-1),
            torch.stack([m10 - m01, m20 + m02, m21 + m12, q_abs[..., 3] ** 2], dim=-1),
        ],
        dim=-2,
    )

    # We floor here at 0.1 but the exact level is not important; if q_abs is small,
    # the candidate won't be picked.
    flr = torch.tensor(0.1).to(dtype=q_abs.dtype, device=q_abs.device)
    quat_candidates = quat_by_rijk / (2.0 * q_abs[..., None].max(flr))

    # if not for numerical problems, quat_candidates[i] should be same (up to a sign),
    # forall i; we pick the best-conditioned one (with the largest denominator)
    # the row the one-hot mask selects is the argmax row: gather it (one per matrix)
    best = q_abs.argmax(dim=-1)[..., None, None].expand(batch_dim + (1, 4))
    out = torch.gather(quat_candidates, -2, best).reshape(batch_dim + (4,))
    return standardize_quaternion(out)


def make():
    return matrix_to_quaternion


def inputs():
    g = torch.Generator().manual_seed(3)

    def rots(*shape):
        q = torch.randn(*shape, 4, generator=g)
        return quaternion_to_matrix(q / q.norm(dim=-1, keepdim=True))

    half_turn = lambda axis: quaternion_to_matrix(torch.eye(4)[axis])  # 180 deg about x, y or z
    noisy = rots(6) + 0.05 * torch.randn(6, 3, 3, generator=g)          # not quite orthogonal
    return [
        (rots(5),),
        (rots(2, 3),),                 # extra batch dims
        (rots(1)[0],),                 # a single matrix, batch_dim == ()
        (torch.eye(3).expand(3, 3, 3).clone(),),   # identity: r candidate, three q_abs exactly 0
        (torch.stack([half_turn(1), half_turn(2), half_turn(3)]),),  # i, j, k candidates
        (noisy,),
        (-torch.eye(3)[None],),        # reflection: all of 1 +- m.. <= 0 except one
        (torch.zeros(0, 3, 3),),       # empty batch
        (rots(4).double(),),
    ]


def failing_inputs():
    return [(torch.zeros(2, 3, 4),)]
