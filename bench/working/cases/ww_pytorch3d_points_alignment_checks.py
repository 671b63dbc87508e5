"""pytorch3d.ops.corresponding_points_alignment: the Umeyama / weighted-Procrustes step that ICP
runs every iteration (`iterative_closest_point` calls it with `weights=mask_X`).

Source: https://github.com/facebookresearch/pytorch3d/blob/9381c4016376345bb795b97c45a6c2de66db354a/pytorch3d/ops/points_alignment.py
        https://github.com/facebookresearch/pytorch3d/blob/9381c4016376345bb795b97c45a6c2de66db354a/pytorch3d/ops/utils.py
        (wmean, convert_pointclouds_to_tensor, is_pointclouds)
corresponding_points_alignment is kept as in the source (the list-of-weights branch, which needs
pytorch3d.structures.list_to_padded, is left out). `Clouds` below is a stand-in for
pytorch3d.structures.Pointclouds exposing the two methods the function uses (points_padded,
num_points_per_cloud), so heterogeneous batches reach the masking branch as they do with
Pointclouds.

Breaks: four Python `if`s on tensor values (dynamo: "Data-dependent branching"):
`(num_points != num_points_Y).any()` guarding a ValueError, `(num_points < Xt.shape[1]).any()`
choosing whether to build the padding mask, and two `.any()` conditions guarding
warnings.warn (fewer than dim+1 points; a singular value <= 1e-15).

HAND: the ValueError check and the two warnings move into torch.library custom ops registered
with an ORDERED effect (same messages, same conditions, raised/emitted at run time); the padding
mask is always built (`arange < num_points`, all ones when every cloud is full), which only
multiplies by 1 when the original skipped it (wmean then divides a sum by the point count instead
of calling mean: equal up to float rounding). Gradients are unchanged.
"""

import dataclasses
import warnings
from typing import NamedTuple

import torch


class SimilarityTransform(NamedTuple):
    R: torch.Tensor
    T: torch.Tensor
    s: torch.Tensor


@dataclasses.dataclass
class Clouds:
    """Stand-in for pytorch3d.structures.Pointclouds: padded points plus per-cloud counts."""

    padded: torch.Tensor
    num_points: torch.Tensor

    def points_padded(self):
        return self.padded

    def num_points_per_cloud(self):
        return self.num_points


def is_pointclouds(pcl) -> bool:
    """Checks whether the input `pcl` is an instance of `Pointclouds`
    by checking the existence of `points_padded` and `num_points_per_cloud`
    functions.
    """
    return hasattr(pcl, "points_padded") and hasattr(pcl, "num_points_per_cloud")


def convert_pointclouds_to_tensor(pcl):
    if is_pointclouds(pcl):
        X = pcl.points_padded()  # type: ignore
        num_points = pcl.num_points_per_cloud()  # type: ignore
    elif torch.is_tensor(pcl):
        X = pcl
        num_points = X.shape[1] * torch.ones(  # type: ignore
            X.shape[0],
            device=X.device,
            dtype=torch.int64,
        )
    else:
        raise ValueError("The inputs X, Y should be either Pointclouds objects or tensors.")
    return X, num_points


def wmean(x, weight=None, dim=-2, keepdim=True, eps=1e-9):
    args = {"dim": dim, "keepdim": keepdim}

    if weight is None:
        return x.mean(**args)

    if any(xd != wd and xd != 1 and wd != 1 for xd, wd in zip(x.shape[-2::-1], weight.shape[::-1])):
        raise ValueError("wmean: weights are not compatible with the tensor")

    return (x * weight[..., None]).sum(**args) / weight[..., None].sum(**args).clamp(eps)


# threshold for checking that point crosscorelation
# is full rank in corresponding_points_alignment
AMBIGUOUS_ROT_SINGULAR_THR = 1e-15


def corresponding_points_alignment(X, Y, weights=None, estimate_scale: bool = False, allow_reflection: bool = False, eps: float = 1e-9):
    # make sure we convert input Pointclouds structures to tensors
    Xt, num_points = convert_pointclouds_to_tensor(X)
    Yt, num_points_Y = convert_pointclouds_to_tensor(Y)

    if (Xt.shape != Yt.shape) or (num_points != num_points_Y).any():
        raise ValueError(
            "Point sets X and Y have to have the same \
            number of batches, points and dimensions."
        )
    if weights is not None:
        if Xt.shape[:2] != weights.shape:
            raise ValueError("weights should have the same first two dimensions as X.")

    b, n, dim = Xt.shape

    if (num_points < Xt.shape[1]).any() or (num_points < Yt.shape[1]).any():
        # in case we got Pointclouds as input, mask the unused entries in Xc, Yc
        mask = (torch.arange(n, dtype=torch.int64, device=Xt.device)[None] < num_points[:, None]).type_as(Xt)
        weights = mask if weights is None else mask * weights.type_as(Xt)

    # compute the centroids of the point sets
    Xmu = wmean(Xt, weight=weights, eps=eps)
    Ymu = wmean(Yt, weight=weights, eps=eps)

    # mean-center the point sets
    Xc = Xt - Xmu
    Yc = Yt - Ymu

    total_weight = torch.clamp(num_points, 1)
    # special handling for heterogeneous point clouds and/or input weights
    if weights is not None:
        Xc *= weights[:, :, None]
        Yc *= weights[:, :, None]
        total_weight = torch.clamp(weights.sum(1), eps)

    if (num_points < (dim + 1)).any():
        warnings.warn(
            "The size of one of the point clouds is <= dim+1. "
            + "corresponding_points_alignment cannot return a unique rotation."
        )

    # compute the covariance XYcov between the point sets Xc, Yc
    XYcov = torch.bmm(Xc.transpose(2, 1), Yc)
    XYcov = XYcov / total_weight[:, None, None]

    # decompose the covariance matrix XYcov
    U, S, V = torch.svd(XYcov)

    # catch ambiguous rotation by checking the magnitude of singular values
    if (S.abs() <= AMBIGUOUS_ROT_SINGULAR_THR).any() and not (num_points < (dim + 1)).any():
        warnings.warn(
            "Excessively low rank of "
            + "cross-correlation between aligned point clouds. "
            + "corresponding_points_alignment cannot return a unique rotation."
        )

    # identity matrix used for fixing reflections
    E = torch.eye(dim, dtype=XYcov.dtype, device=XYcov.device)[None].repeat(b, 1, 1)

    if not allow_reflection:
        # reflection test:
        #   checks whether the estimated rotation has det==1,
        #   if not, finds the nearest rotation s.t. det==1 by
        #   flipping the sign of the last singular vector U
        R_test = torch.bmm(U, V.transpose(2, 1))
        E[:, -1, -1] = torch.det(R_test)

    # find the rotation matrix by composing U and V again
    R = torch.bmm(torch.bmm(U, E), V.transpose(2, 1))

    if estimate_scale:
        # estimate the scaling component of the transformation
        trace_ES = (torch.diagonal(E, dim1=1, dim2=2) * S).sum(1)
        Xcov = (Xc * Xc).sum((1, 2)) / total_weight

        # the scaling component
        s = trace_ES / torch.clamp(Xcov, eps)

        # translation component
        T = Ymu[:, 0, :] - s[:, None] * torch.bmm(Xmu, R)[:, 0, :]
    else:
        # translation component
        T = Ymu[:, 0, :] - torch.bmm(Xmu, R)[:, 0, :]

        # unit scaling since we do not estimate scale
        s = T.new_ones(b)

    return SimilarityTransform(R, T, s)


KIND = "data-dependent raise/warn + branch (.any())"
GRAD = True


def make():
    torch.manual_seed(0)
    return corresponding_points_alignment


def _rotation(g, b):
    q = torch.randn(b, 3, 3, generator=g)
    Q, _ = torch.linalg.qr(q)
    d = torch.det(Q)
    Q[:, :, 0] *= d[:, None]  # det +1
    return Q


def _pair(g, b, n, noise=0.01, scale=1.0):
    X = torch.randn(b, n, 3, generator=g)
    R = _rotation(g, b)
    T = torch.randn(b, 1, 3, generator=g)
    Y = scale * torch.bmm(X, R) + T + noise * torch.randn(b, n, 3, generator=g)
    return X, Y


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    X, Y = _pair(g, 2, 8)
    out.append((X, Y))  # full tensors
    X, Y = _pair(g, 2, 8, scale=1.7)
    out.append((X, Y, None, True))  # estimate_scale
    X, Y = _pair(g, 3, 6)
    out.append((X, Y, torch.rand(3, 6, generator=g) + 0.1, False, True))  # weights, allow_reflection
    X, Y = _pair(g, 2, 3)
    out.append((X, Y))  # 3 points <= dim: first warning
    X, Y = _pair(g, 2, 6)
    X[1] = X[1, :1]  # a degenerate cloud: all points equal -> zero covariance
    out.append((X, Y))  # second warning
    X, Y = _pair(g, 3, 7)
    npts = torch.tensor([7, 5, 6])
    out.append((Clouds(X, npts), Clouds(Y, npts)))  # heterogeneous: padding mask
    X, Y = _pair(g, 2, 6)
    npts = torch.tensor([6, 3])
    out.append((Clouds(X, npts), Clouds(Y, npts), torch.rand(2, 6, generator=g) + 0.5, True))  # mask * weights + warning
    X, Y = _pair(g, 2, 5, noise=0.0)
    out.append((X, Y, None, True, True))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    X, Y = _pair(g, 2, 6)
    return [
        (Clouds(X, torch.tensor([6, 5])), Clouds(Y, torch.tensor([6, 4]))),
        (X, Y[:, :5]),
    ]
