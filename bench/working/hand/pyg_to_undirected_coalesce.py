"""Hand rewrite of pyg_to_undirected_coalesce: aggregate the symmetrised edges without coalescing."""
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


def maybe_num_nodes(edge_index, num_nodes=None):
    if num_nodes is not None:
        return num_nodes
    return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0


def broadcast(src: Tensor, ref: Tensor, dim: int) -> Tensor:
    size = ((1, ) * dim) + (-1, ) + ((1, ) * (ref.dim() - dim - 1))
    return src.view(size).expand_as(ref)


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None, reduce: str = "sum") -> Tensor:
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = src.size()[:dim] + (dim_size, ) + src.size()[dim + 1:]
    if reduce == "sum" or reduce == "add":
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_add_(dim, index, src)
    raise ValueError(f"Encountered invalid `reduce` argument '{reduce}'")


def coalesce(edge_index, edge_attr=None, num_nodes=None, reduce="sum", is_sorted=False, sort_by_row=True):
    nnz = edge_index.size(1)
    num_nodes = maybe_num_nodes(edge_index, num_nodes)

    idx = edge_index.new_empty(nnz + 1)
    idx[0] = -1
    idx[1:] = edge_index[1 - int(sort_by_row)]
    idx[1:].mul_(num_nodes).add_(edge_index[int(sort_by_row)])

    if not is_sorted:
        idx[1:], perm = idx[1:].sort()
        edge_index = edge_index[:, perm]
        if isinstance(edge_attr, Tensor):
            edge_attr = edge_attr[perm]

    mask = idx[1:] > idx[:-1]

    # Only perform expensive merging in case there exists duplicates:
    if mask.all():
        if edge_attr is None or isinstance(edge_attr, (Tensor, list, tuple)):
            return edge_index, edge_attr
        return edge_index

    edge_index = edge_index[:, mask]

    dim_size: Optional[int] = None
    if isinstance(edge_attr, (Tensor, list, tuple)) and len(edge_attr) > 0:
        dim_size = edge_index.size(1)
        idx = torch.arange(0, nnz, device=edge_index.device)
        idx.sub_(mask.logical_not_().cumsum(dim=0))

    if edge_attr is None:
        return edge_index, None
    edge_attr = scatter(edge_attr, idx, 0, dim_size, reduce)
    return edge_index, edge_attr


def to_undirected(edge_index, edge_attr=None, num_nodes=None, reduce="add"):
    row, col = edge_index[0], edge_index[1]
    row, col = torch.cat([row, col], dim=0), torch.cat([col, row], dim=0)
    edge_index = torch.stack([row, col], dim=0)

    if isinstance(edge_attr, Tensor):
        edge_attr = torch.cat([edge_attr, edge_attr], dim=0)

    return coalesce(edge_index, edge_attr, num_nodes, reduce)


class SymGCNLayer(nn.Module):
    def __init__(self, in_channels=4, out_channels=3):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index, edge_weight):
        num_nodes = x.size(0)
        # merging duplicate edges (coalesce) does not change the sums below: aggregate the
        # symmetrised edge list directly
        row, col = edge_index[0], edge_index[1]
        edge_index = torch.stack([torch.cat([row, col]), torch.cat([col, row])], dim=0)
        edge_weight = torch.cat([edge_weight, edge_weight], dim=0)
        row, col = edge_index[0], edge_index[1]
        deg = scatter(edge_weight, col, 0, dim_size=num_nodes, reduce="sum")
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt = deg_inv_sqrt.masked_fill(deg_inv_sqrt == float("inf"), 0)
        norm = deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]
        h = self.lin(x)
        out = scatter(norm.unsqueeze(-1) * h[row], col, 0, dim_size=num_nodes, reduce="sum")
        return out + self.bias


def make():
    torch.manual_seed(0)
    return SymGCNLayer()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for n, e in [(5, 6), (4, 3), (6, 12), (3, 1), (8, 10), (5, 2), (7, 20), (4, 4)]:
        ei = torch.randint(0, n, (2, e), generator=g)
        out.append((torch.randn(n, 4, generator=g), ei, torch.rand(e, generator=g) + 0.5))
    # a directed path (no duplicates after symmetrising), and one with a reciprocal pair
    out.append((torch.randn(4, 4, generator=g), torch.tensor([[0, 1, 2], [1, 2, 3]]), torch.rand(3, generator=g) + 0.5))
    out.append((torch.randn(3, 4, generator=g), torch.tensor([[0, 1, 1], [1, 0, 2]]), torch.rand(3, generator=g) + 0.5))
    return out


KIND = "branch+dynamic-shape"
GRAD = True
