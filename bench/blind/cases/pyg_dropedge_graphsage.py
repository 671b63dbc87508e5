"""GraphSAGE (mean aggregation) trained with DropEdge: PyG's `dropout_edge` draws a Bernoulli
keep-mask over the edges and returns the filtered edge_index (both directions of a kept edge when
`force_undirected`), which the SAGEConv layers then aggregate over.

Source: https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/utils/dropout.py
        (dropout_edge) and
        https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/nn/conv/sage_conv.py
        (SAGEConv.forward / message), with MessagePassing.propagate's gather + scatter(reduce='mean')
        (torch_geometric/utils/_scatter.py) written out.
Reduced: two SAGEConv layers (root weight, no projection/normalization), propagate written inline.

Breaks: `edge_index = edge_index[:, edge_mask]` (boolean-mask indexing: the number of kept edges
is data-dependent) and, with `force_undirected`, `edge_mask.nonzero()`.

HAND: no filtering: the keep-mask (`& (row <= col)` for the undirected case, plus the flipped
direction) becomes a 0/1 weight on every edge's message and on the mean's count — the same sums in
the same order (the dropped edges add exact zeros), the same random draws.
"""
from typing import Tuple

import torch
from torch import Tensor, nn


def dropout_edge(edge_index: Tensor, p: float = 0.5,
                 force_undirected: bool = False,
                 training: bool = True) -> Tuple[Tensor, Tensor]:
    if p < 0. or p > 1.:
        raise ValueError(f'Dropout probability has to be between 0 and 1 '
                         f'(got {p}')

    if not training or p == 0.0:
        edge_mask = edge_index.new_ones(edge_index.size(1), dtype=torch.bool)
        return edge_index, edge_mask

    row, col = edge_index

    edge_mask = torch.rand(row.size(0), device=edge_index.device) >= p

    if force_undirected:
        edge_mask[row > col] = False

    edge_index = edge_index[:, edge_mask]

    if force_undirected:
        edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
        edge_mask = edge_mask.nonzero().repeat((2, 1)).squeeze()

    return edge_index, edge_mask


def scatter_mean(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
    count = src.new_zeros(dim_size)
    count.scatter_add_(0, index, src.new_ones(src.size(0)))
    count = count.clamp(min=1)
    out = src.new_zeros((dim_size, src.size(1))).scatter_add_(0, index.view(-1, 1).expand_as(src), src)
    return out / count.view(-1, 1)


class SAGEConv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, root_weight: bool = True):
        super().__init__()
        self.root_weight = root_weight
        self.lin_l = nn.Linear(in_channels, out_channels, bias=True)
        if self.root_weight:
            self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def propagate(self, edge_index, x):
        # flow="source_to_target": messages x_j from edge_index[0] aggregated at edge_index[1]
        x_j = self.message(x[0].index_select(0, edge_index[0]))
        return scatter_mean(x_j, edge_index[1], dim_size=x[1].size(0))

    def forward(self, x, edge_index):
        if isinstance(x, Tensor):
            x = (x, x)

        out = self.propagate(edge_index, x=x)
        out = self.lin_l(out)

        x_r = x[1]
        if self.root_weight and x_r is not None:
            out = out + self.lin_r(x_r)

        return out

    def message(self, x_j: Tensor) -> Tensor:
        return x_j


class DropEdgeSAGE(nn.Module):
    def __init__(self, in_channels=4, hidden=6, out_channels=3, p=0.3):
        super().__init__()
        self.conv1 = SAGEConv(in_channels, hidden)
        self.conv2 = SAGEConv(hidden, out_channels)
        self.p = p

    def forward(self, x, edge_index, force_undirected=False):
        edge_index, _ = dropout_edge(edge_index, p=self.p, force_undirected=force_undirected,
                                     training=self.training)
        x = self.conv1(x, edge_index).relu()
        return self.conv2(x, edge_index)


def make():
    torch.manual_seed(0)
    model = DropEdgeSAGE()
    model.train()
    return model


def _graph(g, n, e, undirected=False):
    src = torch.randint(0, n, (e,), generator=g)
    dst = torch.randint(0, n, (e,), generator=g)
    ei = torch.stack([src, dst])
    if undirected:
        ei = torch.cat([ei, ei.flip(0)], dim=1)
    return torch.randn(n, 4, generator=g), ei


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for n, e, und in [(5, 8, False), (6, 4, True), (4, 10, False), (7, 6, True),
                      (3, 2, False), (8, 12, True), (5, 1, False), (6, 9, True)]:
        x, ei = _graph(g, n, e, und)
        out.append((x, ei, und))
    # a self loop and an isolated node
    out.append((torch.randn(4, 4, generator=g), torch.tensor([[0, 1, 2, 2], [1, 0, 2, 1]]), True))
    return out


KIND = "dynamic-shape"
GRAD = True
