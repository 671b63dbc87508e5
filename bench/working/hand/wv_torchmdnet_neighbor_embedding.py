"""TorchMD-Net NeighborEmbedding (first interaction of the equivariant transformer / TensorNet
family: embeds each atom's neighbourhood with cutoff-weighted distance features).

Source: https://github.com/torchmd/torchmd-net/blob/00bfa6e2b8c1c0e010583f4132c2711475415690/torchmdnet/models/utils.py
(NeighborEmbedding, CosineCutoff, kept as in the source). torch_geometric's MessagePassing is
reduced to the part this module uses: `propagate` with the default source_to_target flow and
aggr="add" (x_j = x[edge_index[0]], summed into edge_index[1]). hidden 8, 6 radial features,
5-7 atoms.

Breaks: `mask = edge_index[0] != edge_index[1]; if not mask.all():` is a data-dependent branch,
and its body filters the edges with the boolean mask (`edge_index[:, mask]`,
`edge_weight[mask]`, `edge_attr[mask]`): data-dependent output shapes.

HAND: self-loop edges are kept but their filter W is set to zero with torch.where, so their
messages x_j * W add exact zeros to the sums (the same sums in the same order) and their
edge_weight/edge_attr/parameter gradients are zero, as for dropped edges.
"""
import math

import torch
from torch import nn

KIND = "mask.all() branch + bool-mask edge filter"
GRAD = True


class MessagePassing(nn.Module):
    """torch_geometric.nn.MessagePassing, reduced to propagate(..., size=None) with aggr='add'."""

    def __init__(self, aggr="add"):
        super().__init__()
        assert aggr == "add"
        self.aggr = aggr

    def propagate(self, edge_index, x, W, size=None):
        x_j = x.index_select(0, edge_index[0])
        msg = self.message(x_j, W)
        out = torch.zeros(x.size(0), msg.size(1), dtype=msg.dtype, device=msg.device)
        return out.index_add_(0, edge_index[1], msg)


class CosineCutoff(nn.Module):
    def __init__(self, cutoff_lower=0.0, cutoff_upper=5.0):
        super(CosineCutoff, self).__init__()
        self.cutoff_lower = cutoff_lower
        self.cutoff_upper = cutoff_upper

    def forward(self, distances):
        if self.cutoff_lower > 0:
            cutoffs = 0.5 * (
                torch.cos(
                    math.pi
                    * (
                        2
                        * (distances - self.cutoff_lower)
                        / (self.cutoff_upper - self.cutoff_lower)
                        + 1.0
                    )
                )
                + 1.0
            )
            # remove contributions below the cutoff radius
            cutoffs = cutoffs * (distances < self.cutoff_upper).float()
            cutoffs = cutoffs * (distances > self.cutoff_lower).float()
            return cutoffs
        else:
            cutoffs = 0.5 * (torch.cos(distances * math.pi / self.cutoff_upper) + 1.0)
            # remove contributions beyond the cutoff radius
            cutoffs = cutoffs * (distances < self.cutoff_upper).float()
            return cutoffs


class NeighborEmbedding(MessagePassing):
    def __init__(self, hidden_channels, num_rbf, cutoff_lower, cutoff_upper, max_z=100):
        super(NeighborEmbedding, self).__init__(aggr="add")
        self.embedding = nn.Embedding(max_z, hidden_channels)
        self.distance_proj = nn.Linear(num_rbf, hidden_channels)
        self.combine = nn.Linear(hidden_channels * 2, hidden_channels)
        self.cutoff = CosineCutoff(cutoff_lower, cutoff_upper)

        self.reset_parameters()

    def reset_parameters(self):
        self.embedding.reset_parameters()
        nn.init.xavier_uniform_(self.distance_proj.weight)
        nn.init.xavier_uniform_(self.combine.weight)
        self.distance_proj.bias.data.fill_(0)
        self.combine.bias.data.fill_(0)

    def forward(self, z, x, edge_index, edge_weight, edge_attr):
        # self loops are kept with a zero filter (their messages add exact zeros)
        mask = edge_index[0] != edge_index[1]

        C = self.cutoff(edge_weight)
        W = self.distance_proj(edge_attr) * C.view(-1, 1)
        W = torch.where(mask.view(-1, 1), W, 0.0)

        x_neighbors = self.embedding(z)
        # propagate_type: (x: Tensor, W: Tensor)
        x_neighbors = self.propagate(edge_index, x=x_neighbors, W=W, size=None)
        x_neighbors = self.combine(torch.cat([x, x_neighbors], dim=1))
        return x_neighbors

    def message(self, x_j, W):
        return x_j * W


def make():
    torch.manual_seed(0)
    return NeighborEmbedding(hidden_channels=8, num_rbf=6, cutoff_lower=0.0, cutoff_upper=3.0, max_z=10)


def _graph(g, n, self_loops):
    pos = 2.0 * torch.rand(n, 3, generator=g)
    src, dst = [], []
    for i in range(n):
        for j in range(n):
            if i != j or self_loops:
                src.append(i)
                dst.append(j)
    edge_index = torch.tensor([src, dst])
    vec = pos[edge_index[0]] - pos[edge_index[1]]
    edge_weight = vec.norm(dim=-1)
    offsets = torch.linspace(0.0, 3.0, 6)
    edge_attr = torch.exp(-2.0 * (edge_weight[:, None] - offsets) ** 2)
    z = torch.randint(1, 10, (n,), generator=g)
    x = torch.randn(n, 8, generator=g)
    return (z, x, edge_index, edge_weight, edge_attr)


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        _graph(g, 5, True),
        _graph(g, 5, False),
        _graph(g, 6, True),
        _graph(g, 7, False),
        _graph(g, 4, True),
        _graph(g, 6, False),
        _graph(g, 7, True),
        _graph(g, 3, False),
    ]
