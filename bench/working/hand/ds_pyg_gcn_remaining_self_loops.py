"""Hand rewrite of ds_pyg_gcn_remaining_self_loops: input self-loops kept with weight 0, loop weights via index_put."""

import torch
import torch.nn as nn

KIND = "gnn-mask"
GRAD = True


def scatter_sum(src, index, dim_size):
    out = src.new_zeros((dim_size,) + src.shape[1:])
    index = index.view((-1,) + (1,) * (src.dim() - 1)).expand_as(src)
    return out.scatter_add_(0, index, src)


def add_remaining_self_loops(edge_index, edge_attr=None, fill_value=None, num_nodes=None):
    N = num_nodes
    mask = edge_index[0] != edge_index[1]

    loop_index = torch.arange(0, N, dtype=torch.long, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)

    if edge_attr is None:
        # the input self-loops stay in the list with weight 0 (gcn_norm's ones would count them)
        edge_attr_out = torch.cat([mask.to(torch.get_default_dtype()),
                                   torch.ones(N, device=edge_index.device)], dim=0)
        return torch.cat([edge_index, loop_index], dim=1), edge_attr_out, True

    if fill_value is None:
        loop_attr = edge_attr.new_full((N + 1, ) + edge_attr.size()[1:], 1.)
    elif isinstance(fill_value, (int, float)):
        loop_attr = edge_attr.new_full((N + 1, ) + edge_attr.size()[1:], fill_value)
    else:
        raise AttributeError("No valid 'fill_value' provided")

    inv_mask = ~mask
    slot = torch.where(inv_mask, edge_index[0], N)   # non-loop edges write into the spare row N
    loop_attr = loop_attr.index_put((slot, ), edge_attr)[:N]

    kept = torch.where(mask, edge_attr, torch.zeros_like(edge_attr))
    edge_attr = torch.cat([kept, loop_attr], dim=0)

    edge_index = torch.cat([edge_index, loop_index], dim=1)
    return edge_index, edge_attr, False


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True,
             flow="source_to_target", dtype=None):
    fill_value = 2. if improved else 1.

    assert flow in ['source_to_target', 'target_to_source']

    if add_self_loops:
        edge_index, edge_weight, ones = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)
        if ones:
            edge_weight = edge_weight.to(dtype)

    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1), ), dtype=dtype, device=edge_index.device)

    row, col = edge_index[0], edge_index[1]
    idx = col if flow == 'source_to_target' else row
    deg = scatter_sum(edge_weight, idx, num_nodes)
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
    edge_weight = deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]
    return edge_index, edge_weight


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels, improved=False, add_self_loops=True):
        super().__init__()
        self.improved = improved
        self.add_self_loops = add_self_loops
        self.flow = "source_to_target"
        self.node_dim = 0
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels) * 0.1)

    def forward(self, x, edge_index, edge_weight=None):
        edge_index, edge_weight = gcn_norm(  # yapf: disable
            edge_index, edge_weight, x.size(self.node_dim),
            self.improved, self.add_self_loops, self.flow, x.dtype)
        x = self.lin(x)
        # propagate: message x_j * w_ij, summed at the target node
        msg = x[edge_index[0]] * edge_weight.view(-1, 1)
        out = scatter_sum(msg, edge_index[1], x.size(self.node_dim))
        if self.bias is not None:
            out = out + self.bias
        return out


def make():
    torch.manual_seed(0)
    return GCNConv(4, 3)


def inputs():
    g = torch.Generator().manual_seed(13)
    ring = torch.tensor([[0, 1, 2, 3, 4, 1, 2, 3, 4, 0], [1, 2, 3, 4, 0, 0, 1, 2, 3, 4]])
    with_loops = torch.tensor([[0, 1, 2, 2, 3, 1, 4], [1, 2, 2, 3, 3, 0, 4]])
    all_loops = torch.tensor([[0, 1, 2], [0, 1, 2]])
    x5 = lambda: torch.randn(5, 4, generator=g)
    w = lambda n: torch.rand(n, generator=g) + 0.5
    return [
        (x5(), ring),
        (x5(), ring, w(10)),
        (x5(), with_loops),
        (x5(), with_loops, w(7)),
        (torch.randn(3, 4, generator=g), all_loops, w(3)),
        (torch.randn(6, 4, generator=g), with_loops, w(7)),           # node 5 isolated
        (torch.randn(4, 4, generator=g), torch.zeros(2, 0, dtype=torch.long), torch.zeros(0)),  # no edges
        (x5(), torch.tensor([[0, 0, 1, 3], [0, 4, 1, 2]]), w(4)),
        (x5(), torch.tensor([[4, 3, 3], [4, 3, 1]])),
    ]
