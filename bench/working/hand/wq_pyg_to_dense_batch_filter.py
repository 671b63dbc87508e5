"""PyG `to_dense_batch` with a fixed `max_num_nodes`/`batch_size` (the static-shape use in dense
GNN pooling such as DiffPool / DMoN / dense graph transformers), inside a tiny dense readout model.

Source: https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/utils/_to_dense_batch.py
(`to_dense_batch`; `scatter`/`cumsum` from torch_geometric.utils reduced to their sum/cumsum paths;
the `disable_dynamic_shapes` decorator is inactive by default and left out).

Breaks: `elif not dynamic_shapes_disabled and num_nodes.max() > max_num_nodes:` branches on a
tensor (data-dependent branching); the `filter_nodes` path then gathers with a boolean mask
(`x[mask]`, dynamic shape).

HAND: always filter, without a dynamic shape: nodes past `max_num_nodes` are routed to one extra
dump row (`idx = torch.where(tmp < max_num_nodes, idx, batch_size * max_num_nodes)`) of a buffer one
row longer, which is sliced off; values, mask and gradients are the same as the original's
(nodes dropped by the filter get zero gradient either way).
"""
from typing import Optional

import torch
from torch import Tensor

KIND = "branch+dynamic-shape"
GRAD = True


def is_experimental_mode_enabled(options=None) -> bool:
    return False


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None,
            reduce: str = 'sum') -> Tensor:
    assert reduce == 'sum' and dim == 0
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    return src.new_zeros(dim_size).scatter_add_(0, index, src)


def cumsum(x: Tensor, dim: int = 0) -> Tensor:
    size = x.size()[:dim] + (x.size(dim) + 1, ) + x.size()[dim + 1:]
    out = x.new_empty(size)
    out.narrow(dim, 0, 1).zero_()
    torch.cumsum(x, dim=dim, out=out.narrow(dim, 1, x.size(dim)))
    return out


def to_dense_batch(
    x: Tensor,
    batch: Optional[Tensor] = None,
    fill_value: float = 0.0,
    max_num_nodes: Optional[int] = None,
    batch_size: Optional[int] = None,
):
    if batch is None and max_num_nodes is None:
        mask = torch.ones(1, x.size(0), dtype=torch.bool, device=x.device)
        return x.unsqueeze(0), mask

    if batch is None:
        batch = x.new_zeros(x.size(0), dtype=torch.long)

    if batch_size is None:
        batch_size = int(batch.max()) + 1

    num_nodes = scatter(batch.new_ones(x.size(0)), batch, dim=0,
                        dim_size=batch_size, reduce='sum')
    cum_nodes = cumsum(num_nodes)

    if max_num_nodes is None:
        max_num_nodes = int(num_nodes.max())

    tmp = torch.arange(batch.size(0), device=x.device) - cum_nodes[batch]
    idx = tmp + (batch * max_num_nodes)
    # nodes past max_num_nodes go to one extra dump row, sliced off below (no dynamic shape)
    n_slots = batch_size * max_num_nodes
    idx = torch.where(tmp < max_num_nodes, idx, n_slots)

    size = [n_slots + 1] + list(x.size())[1:]
    out = torch.as_tensor(fill_value, device=x.device, dtype=x.dtype)
    out = out.repeat(size)
    out[idx] = x
    out = out[:n_slots].view([batch_size, max_num_nodes] + list(x.size())[1:])

    mask = torch.zeros(n_slots + 1, dtype=torch.bool,
                       device=x.device)
    mask[idx] = 1
    mask = mask[:n_slots].view(batch_size, max_num_nodes)

    return out, mask


class DenseReadout(torch.nn.Module):
    def __init__(self, in_channels=3, hidden=4, max_num_nodes=4, batch_size=3):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, hidden)
        self.att = torch.nn.Linear(hidden, 1)
        self.max_num_nodes = max_num_nodes
        self.batch_size = batch_size

    def forward(self, x, batch):
        h = self.lin(x).relu()
        dense, mask = to_dense_batch(h, batch, fill_value=0.0,
                                     max_num_nodes=self.max_num_nodes,
                                     batch_size=self.batch_size)
        score = self.att(dense).squeeze(-1).masked_fill(~mask, float('-inf'))
        weight = torch.softmax(score, dim=-1).nan_to_num(0.0)
        return (weight.unsqueeze(-1) * dense).sum(1), mask


def make():
    torch.manual_seed(0)
    return DenseReadout()


def inputs():
    g = torch.Generator().manual_seed(3)
    out = []
    for counts in [(6, 2, 3), (2, 3, 4), (1, 1, 1), (4, 4, 4), (5, 0, 2), (3, 7, 1), (0, 2, 2), (2, 2, 9)]:
        batch = torch.cat([torch.full((c,), i, dtype=torch.long) for i, c in enumerate(counts)])
        x = torch.randn(batch.numel(), 3, generator=g).requires_grad_()
        out.append((x, batch))
    return out
