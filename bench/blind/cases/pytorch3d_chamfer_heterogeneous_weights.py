"""PyTorch3D's chamfer distance between (possibly padded) point clouds with optional normals and
per-cloud weights.

Source: https://github.com/facebookresearch/pytorch3d/blob/main/pytorch3d/loss/chamfer.py
        (chamfer_distance, _handle_pointcloud_input, _validate_chamfer_reduction_inputs).
Reduced: `knn_points(..., K=1)` / `knn_gather` (C++/CUDA ops) are replaced by a brute-force
nearest neighbour in torch that honours the lengths; `Pointclouds` inputs are not supported.

Breaks: `if is_x_heterogeneous:` / `if is_y_heterogeneous:` (branches on `(lengths != P).any()`,
four lines with the normals), `if not (weights >= 0).all(): raise ValueError(...)` and
`if weights.sum() == 0.0:` (data-dependent branches).

HAND (partial): the heterogeneous branches become unconditional `masked_fill(mask, 0.0)` (a no-op
when no cloud is padded); the non-negative check moves into a `torch.library.custom_op` with an
ORDERED effect that raises the same ValueError at run time. The all-zero-weights early return stays:
it returns before `y` and the normals are used, so their gradients are None (a `torch.where` would
give zero tensors), its second element is a tensor where the normal path returns None, and without
a batch reduction it broadcasts to (N, N).
"""
from typing import Union

import torch
import torch.nn.functional as F


def _validate_chamfer_reduction_inputs(
    batch_reduction: Union[str, None], point_reduction: str
):
    """Check the requested reductions are valid."""
    if batch_reduction is not None and batch_reduction not in ["mean", "sum"]:
        raise ValueError('batch_reduction must be one of ["mean", "sum"] or None')
    if point_reduction not in ["mean", "sum"]:
        raise ValueError('point_reduction must be one of ["mean", "sum"]')


def _handle_pointcloud_input(points, lengths, normals):
    if torch.is_tensor(points):
        if points.ndim != 3:
            raise ValueError("Expected points to be of shape (N, P, D)")
        X = points
        if lengths is not None and (
            lengths.ndim != 1 or lengths.shape[0] != X.shape[0]
        ):
            raise ValueError("Expected lengths to be of shape (N,)")
        if lengths is None:
            lengths = torch.full(
                (X.shape[0],), X.shape[1], dtype=torch.int64, device=points.device
            )
        if normals is not None and normals.ndim != 3:
            raise ValueError("Expected normals to be of shape (N, P, 3")
    else:
        raise ValueError(
            "The input pointclouds should be either "
            + "Pointclouds objects or torch.Tensor of shape "
            + "(minibatch, num_points, 3)."
        )
    return X, lengths, normals


class _KNN:
    def __init__(self, dists, idx):
        self.dists = dists
        self.idx = idx


def knn_points(p1, p2, lengths1=None, lengths2=None, K=1):
    """Brute-force stand-in for pytorch3d.ops.knn_points with K=1 (squared distances)."""
    d = ((p1[:, :, None, :] - p2[:, None, :, :]) ** 2).sum(-1)  # (N, P1, P2)
    invalid = torch.arange(p2.shape[1], device=p2.device)[None, None, :] >= lengths2[:, None, None]
    d = d.masked_fill(invalid, float("inf"))
    dists, idx = d.min(dim=2, keepdim=True)
    return _KNN(dists, idx)


def knn_gather(x, idx, lengths=None):
    N, L, U = idx.shape
    C = x.shape[2]
    return x.gather(1, idx.reshape(N, L * U, 1).expand(N, L * U, C)).view(N, L, U, C)


def chamfer_distance(
    x,
    y,
    x_lengths=None,
    y_lengths=None,
    x_normals=None,
    y_normals=None,
    weights=None,
    batch_reduction: Union[str, None] = "mean",
    point_reduction: str = "mean",
):
    """
    Chamfer distance between two pointclouds x and y.
    """
    _validate_chamfer_reduction_inputs(batch_reduction, point_reduction)

    x, x_lengths, x_normals = _handle_pointcloud_input(x, x_lengths, x_normals)
    y, y_lengths, y_normals = _handle_pointcloud_input(y, y_lengths, y_normals)

    return_normals = x_normals is not None and y_normals is not None

    N, P1, D = x.shape
    P2 = y.shape[1]

    # Check if inputs are heterogeneous and create a lengths mask.
    is_x_heterogeneous = (x_lengths != P1).any()
    is_y_heterogeneous = (y_lengths != P2).any()
    x_mask = (
        torch.arange(P1, device=x.device)[None] >= x_lengths[:, None]
    )  # shape [N, P1]
    y_mask = (
        torch.arange(P2, device=y.device)[None] >= y_lengths[:, None]
    )  # shape [N, P2]

    if y.shape[0] != N or y.shape[2] != D:
        raise ValueError("y does not have the correct shape.")
    if weights is not None:
        if weights.size(0) != N:
            raise ValueError("weights must be of shape (N,).")
        if not (weights >= 0).all():
            raise ValueError("weights cannot be negative.")
        if weights.sum() == 0.0:
            weights = weights.view(N, 1)
            if batch_reduction in ["mean", "sum"]:
                return (
                    (x.sum((1, 2)) * weights).sum() * 0.0,
                    (x.sum((1, 2)) * weights).sum() * 0.0,
                )
            return ((x.sum((1, 2)) * weights) * 0.0, (x.sum((1, 2)) * weights) * 0.0)

    cham_norm_x = x.new_zeros(())
    cham_norm_y = x.new_zeros(())

    x_nn = knn_points(x, y, lengths1=x_lengths, lengths2=y_lengths, K=1)
    y_nn = knn_points(y, x, lengths1=y_lengths, lengths2=x_lengths, K=1)

    cham_x = x_nn.dists[..., 0]  # (N, P1)
    cham_y = y_nn.dists[..., 0]  # (N, P2)

    if is_x_heterogeneous:
        cham_x[x_mask] = 0.0
    if is_y_heterogeneous:
        cham_y[y_mask] = 0.0

    if weights is not None:
        cham_x *= weights.view(N, 1)
        cham_y *= weights.view(N, 1)

    if return_normals:
        # Gather the normals using the indices and keep only value for k=0
        x_normals_near = knn_gather(y_normals, x_nn.idx, y_lengths)[..., 0, :]
        y_normals_near = knn_gather(x_normals, y_nn.idx, x_lengths)[..., 0, :]

        cham_norm_x = 1 - torch.abs(
            F.cosine_similarity(x_normals, x_normals_near, dim=2, eps=1e-6)
        )
        cham_norm_y = 1 - torch.abs(
            F.cosine_similarity(y_normals, y_normals_near, dim=2, eps=1e-6)
        )

        if is_x_heterogeneous:
            cham_norm_x[x_mask] = 0.0
        if is_y_heterogeneous:
            cham_norm_y[y_mask] = 0.0

        if weights is not None:
            cham_norm_x *= weights.view(N, 1)
            cham_norm_y *= weights.view(N, 1)

    # Apply point reduction
    cham_x = cham_x.sum(1)  # (N,)
    cham_y = cham_y.sum(1)  # (N,)
    if return_normals:
        cham_norm_x = cham_norm_x.sum(1)  # (N,)
        cham_norm_y = cham_norm_y.sum(1)  # (N,)
    if point_reduction == "mean":
        cham_x /= x_lengths
        cham_y /= y_lengths
        if return_normals:
            cham_norm_x /= x_lengths
            cham_norm_y /= y_lengths

    if batch_reduction is not None:
        # batch_reduction == "sum"
        cham_x = cham_x.sum()
        cham_y = cham_y.sum()
        if return_normals:
            cham_norm_x = cham_norm_x.sum()
            cham_norm_y = cham_norm_y.sum()
        if batch_reduction == "mean":
            div = weights.sum() if weights is not None else N
            cham_x /= div
            cham_y /= div
            if return_normals:
                cham_norm_x /= div
                cham_norm_y /= div

    cham_dist = cham_x + cham_y
    cham_normals = cham_norm_x + cham_norm_y if return_normals else None

    return cham_dist, cham_normals


def make():
    return chamfer_distance


def inputs():
    g = torch.Generator().manual_seed(0)

    def pts(n, p):
        return torch.randn(n, p, 3, generator=g)

    def nrm(n, p):
        return F.normalize(torch.randn(n, p, 3, generator=g), dim=-1)

    L = torch.tensor
    return [
        (pts(2, 5), pts(2, 4)),
        (pts(2, 5), pts(2, 4), L([3, 5]), L([4, 2])),
        (pts(3, 4), pts(3, 6), None, L([6, 6, 1])),
        (pts(2, 4), pts(2, 3), L([4, 2]), None, nrm(2, 4), nrm(2, 3)),
        (pts(2, 4), pts(2, 4), None, None, nrm(2, 4), nrm(2, 4), L([0.5, 2.0])),
        (pts(2, 4), pts(2, 5), L([2, 4]), L([5, 3]), None, None, L([1.0, 0.0]), None),
        (pts(2, 3), pts(2, 3), None, None, None, None, L([0.0, 0.0]), "sum"),
        (pts(2, 3), pts(2, 4), None, None, None, None, L([0.0, 0.0]), None),
        (pts(2, 3), pts(2, 4), L([3, 1]), None, nrm(2, 3), nrm(2, 4), L([0.0, 0.0])),
        (pts(3, 4), pts(3, 4), None, None, None, None, L([1.0, 2.0, 0.5]), "mean", "sum"),
        (pts(2, 5), pts(2, 3), L([5, 5]), L([3, 3]), nrm(2, 5), nrm(2, 3), L([1.0, 1.0]), "sum", "sum"),
        (pts(2, 3), pts(2, 3), None, None, nrm(2, 3), nrm(2, 3), L([0.0, 0.0]), None),
        (pts(2, 3), pts(2, 4), None, L([4, 2]), nrm(2, 3), nrm(2, 4), L([1.5, 0.5]), None),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 3, generator=g)
    y = torch.randn(2, 3, 3, generator=g)
    return [
        (x, y, None, None, None, None, torch.tensor([1.0, -0.5])),
        (x, y, None, None, None, None, torch.tensor([1.0, 1.0]), "max"),
    ]


KIND = "branch-raise"
GRAD = True
