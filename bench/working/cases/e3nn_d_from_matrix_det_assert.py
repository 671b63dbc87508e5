"""e3nn Irreps.D_from_matrix -> matrix_to_angles: ``assert torch.allclose(torch.det(R), R.new_tensor(1))``.

e3nn's ``o3._rotation`` helpers kept as in the source (``matrix_x``/``matrix_y``,
``angles_to_matrix``, ``xyz_to_angles``, ``matrix_to_angles`` with its determinant assert) and
``Irreps.D_from_matrix`` / ``Irrep.D_from_angles`` (parity from the sign of the determinant, the
``p ** k`` factor) for the irreps ``1x0e + 1x1o``; the l=1 Wigner matrix is reduced to the Cartesian
rotation ``angles_to_matrix`` (e3nn's is the same matrix in its (y, z, x) basis). Used to rotate
a batch of scalar+vector features by given (proper or improper) orthogonal matrices.

Source: https://github.com/e3nn/e3nn/blob/main/e3nn/o3/_rotation.py (matrix_to_angles, xyz_to_angles)
        https://github.com/e3nn/e3nn/blob/main/e3nn/o3/_irreps.py (Irrep.D_from_angles, Irreps.D_from_matrix)

Breaks: ``assert torch.allclose(...)`` — ``torch.allclose`` returns a Python bool computed from
tensor values (data-dependent branch). (Also seen: the compiled original differs from eager because
dynamo emits ``self.p ** k`` with ``p = -1`` as ``-1 ** k`` in the FX code.)

HAND: the assert moves into a ``torch.library.custom_op`` with an ORDERED effect that receives ``R``
and runs the same ``assert torch.allclose(torch.det(R), R.new_tensor(1))`` at run time (same
AssertionError on a matrix that is not orthogonal).
"""
import torch
import torch.nn.functional as F


def matrix_x(angle):
    c = angle.cos()
    s = angle.sin()
    o = torch.ones_like(angle)
    z = torch.zeros_like(angle)
    return torch.stack([
        torch.stack([o, z, z], dim=-1),
        torch.stack([z, c, -s], dim=-1),
        torch.stack([z, s, c], dim=-1),
    ], dim=-2)


def matrix_y(angle):
    c = angle.cos()
    s = angle.sin()
    o = torch.ones_like(angle)
    z = torch.zeros_like(angle)
    return torch.stack([
        torch.stack([c, z, s], dim=-1),
        torch.stack([z, o, z], dim=-1),
        torch.stack([-s, z, c], dim=-1),
    ], dim=-2)


def angles_to_matrix(alpha, beta, gamma):
    alpha, beta, gamma = torch.broadcast_tensors(alpha, beta, gamma)
    return matrix_y(alpha) @ matrix_x(beta) @ matrix_y(gamma)


def xyz_to_angles(xyz):
    xyz = F.normalize(xyz, p=2, dim=-1)  # forward 0's instead of nan for zero-radius
    xyz = xyz.clamp(-1, 1)

    beta = torch.acos(xyz[..., 1])
    alpha = torch.atan2(xyz[..., 0], xyz[..., 2])
    return alpha, beta


def matrix_to_angles(R):
    assert torch.allclose(torch.det(R), R.new_tensor(1))
    x = R @ R.new_tensor([0.0, 1.0, 0.0])
    a, b = xyz_to_angles(x)
    R = angles_to_matrix(a, b, torch.zeros_like(a)).transpose(-1, -2) @ R
    c = torch.atan2(R[..., 0, 2], R[..., 0, 0])
    return a, b, c


class Irrep:
    def __init__(self, l, p):
        self.l = l
        self.p = p

    @property
    def dim(self):
        return 2 * self.l + 1

    def D_from_angles(self, alpha, beta, gamma, k=None):
        if k is None:
            k = torch.zeros_like(alpha)

        alpha, beta, gamma, k = torch.broadcast_tensors(alpha, beta, gamma, k)
        if self.l == 0:
            wigner = torch.ones(alpha.shape + (1, 1), dtype=alpha.dtype)
        else:
            wigner = angles_to_matrix(alpha, beta, gamma)
        return wigner * self.p ** k[..., None, None]


def direct_sum(*matrices):
    front_indices = matrices[0].shape[:-2]
    m = sum(x.size(-2) for x in matrices)
    n = sum(x.size(-1) for x in matrices)
    out = matrices[0].new_zeros(front_indices + (m, n))
    i, j = 0, 0
    for x in matrices:
        m, n = x.shape[-2:]
        out[..., i : i + m, j : j + n] = x
        i += m
        j += n
    return out


class Irreps(tuple):
    def D_from_angles(self, alpha, beta, gamma, k=None):
        return direct_sum(*[ir.D_from_angles(alpha, beta, gamma, k) for mul, ir in self for _ in range(mul)])

    def D_from_matrix(self, R):
        d = torch.det(R).sign()
        R = d[..., None, None] * R
        k = (1 - d) / 2
        return self.D_from_angles(*matrix_to_angles(R), k)


IRREPS = Irreps([(1, Irrep(0, 1)), (1, Irrep(1, -1))])  # "1x0e + 1x1o"


def rotate_features(R, feats):
    D = IRREPS.D_from_matrix(R)           # [batch, 4, 4]
    return torch.einsum("bij,bnj->bni", D, feats)


def make():
    return rotate_features


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for b, n, improper in [(2, 3, False), (1, 4, True), (3, 2, False), (4, 1, True),
                           (1, 5, False), (2, 2, True), (5, 3, False), (2, 6, False)]:
        ang = torch.rand(3, b, generator=g) * torch.tensor([[6.2], [3.0], [6.2]]) + torch.tensor([[0.0], [0.07], [0.0]])
        R = angles_to_matrix(ang[0], ang[1], ang[2])
        if improper:
            R = -R
        out.append((R, torch.randn(b, n, 4, generator=g)))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    ang = torch.rand(3, 2, generator=g) + 0.1
    R = angles_to_matrix(ang[0], ang[1], ang[2]) * 1.1   # not orthogonal: det 1.331
    return [(R, torch.randn(2, 3, 4, generator=g))]


KIND = "assert-allclose"
GRAD = True
