"""PyG's SortAggregation (the SortPool readout of DGCNN): fill a dense [B, N, F] batch with a value
below every feature, sort each graph's nodes by their last channel and keep the first k.

Source: https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/nn/aggr/sort.py
        (SortAggregation.forward),
        https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/nn/aggr/base.py
        (Aggregation.__call__, to_dense_batch, assert_sorted_index),
        https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/utils/_to_dense_batch.py
        (to_dense_batch) and torch_geometric/utils cumsum / scatter(reduce='sum').
Reduced: the experimental `disable_dynamic_shapes` decorator and `ptr` inputs are left out; scatter
is `scatter_add_` into zeros.

Breaks: `fill_value = x.min().item() - 1` (Tensor.item()); `dim_size = int(index.max()) + 1` in
`Aggregation.__call__` when the caller gives no dim_size; `if index is not None and not
torch.all(index[:-1] <= index[1:]): raise ValueError(...)` (assert_sorted_index);
`max_num_nodes = int(num_nodes.max())` in to_dense_batch.

HAND (partial): the fill value stays a 0-d tensor (`x.min() - 1`, the same float32 value);
the sortedness check moves into a `torch.library.custom_op` with an ORDERED effect that raises the
same ValueError at run time; the dense batch is built with `max(num_nodes_total, k)` rows per graph
(a static bound: the extra rows hold the fill value, which sorts after every real node), so the
`N >= k` branch disappears and the result is cut to k rows. `int(index.max()) + 1` stays when the
caller gives no dim_size: it is the number of graphs, the output's first dimension.
"""
from typing import Optional

import torch
from torch import Tensor


def cumsum(x: Tensor, dim: int = 0) -> Tensor:
    size = x.size()[:dim] + (x.size(dim) + 1, ) + x.size()[dim + 1:]
    out = x.new_empty(size)
    out.narrow(dim, 0, 1).zero_()
    torch.cumsum(x, dim=dim, out=out.narrow(dim, 1, x.size(dim)))
    return out


def scatter_sum(src: Tensor, index: Tensor, dim: int, dim_size: int) -> Tensor:
    size = list(src.size())
    size[dim] = dim_size
    return src.new_zeros(size).scatter_add_(dim, index, src)


def to_dense_batch(x, batch=None, fill_value=0.0, max_num_nodes=None, batch_size=None):
    if batch is None and max_num_nodes is None:
        mask = torch.ones(1, x.size(0), dtype=torch.bool, device=x.device)
        return x.unsqueeze(0), mask

    if batch is None:
        batch = x.new_zeros(x.size(0), dtype=torch.long)

    if batch_size is None:
        batch_size = int(batch.max()) + 1

    num_nodes = scatter_sum(batch.new_ones(x.size(0)), batch, dim=0,
                            dim_size=batch_size)
    cum_nodes = cumsum(num_nodes)

    filter_nodes = False
    if max_num_nodes is None:
        max_num_nodes = int(num_nodes.max())
    elif num_nodes.max() > max_num_nodes:
        filter_nodes = True

    tmp = torch.arange(batch.size(0), device=x.device) - cum_nodes[batch]
    idx = tmp + (batch * max_num_nodes)
    if filter_nodes:
        mask = tmp < max_num_nodes
        x, idx = x[mask], idx[mask]

    size = [batch_size * max_num_nodes] + list(x.size())[1:]
    out = torch.as_tensor(fill_value, device=x.device, dtype=x.dtype)
    out = out.repeat(size)
    out[idx] = x
    out = out.view([batch_size, max_num_nodes] + list(x.size())[1:])

    mask = torch.zeros(batch_size * max_num_nodes, dtype=torch.bool,
                       device=x.device)
    mask[idx] = 1
    mask = mask.view(batch_size, max_num_nodes)

    return out, mask


class Aggregation(torch.nn.Module):
    def __call__(self, x: Tensor, index: Optional[Tensor] = None,
                 ptr: Optional[Tensor] = None, dim_size: Optional[int] = None,
                 dim: int = -2, **kwargs) -> Tensor:

        if dim >= x.dim() or dim < -x.dim():
            raise ValueError(f"Encountered invalid dimension '{dim}' of "
                             f"source tensor with {x.dim()} dimensions")

        if index is None and ptr is None:
            index = x.new_zeros(x.size(dim), dtype=torch.long)

        if index is not None and dim_size is None:
            dim_size = int(index.max()) + 1 if index.numel() > 0 else 0

        return super().__call__(x, index, ptr, dim_size, dim, **kwargs)

    def assert_index_present(self, index: Optional[Tensor]):
        # TODO Currently, not all aggregators support `ptr`. This assert helps
        # to ensure that we require `index` to be passed to the computation:
        if index is None:
            raise NotImplementedError(
                "Aggregation requires 'index' to be specified")

    def assert_sorted_index(self, index: Optional[Tensor]):
        if index is not None and not torch.all(index[:-1] <= index[1:]):
            raise ValueError("Can not perform aggregation since the 'index' "
                             "tensor is not sorted")

    def assert_two_dimensional_input(self, x: Tensor, dim: int):
        if x.dim() != 2:
            raise ValueError(f"Aggregation requires two-dimensional inputs "
                             f"(got '{x.dim()}')")

        if dim not in [-2, 0]:
            raise ValueError(f"Aggregation needs to perform aggregation in "
                             f"first dimension (got '{dim}')")

    def to_dense_batch(self, x, index=None, ptr=None, dim_size=None, dim=-2,
                       fill_value=0.0, max_num_elements=None):

        # TODO Currently, `to_dense_batch` can only operate on `index`:
        self.assert_index_present(index)
        self.assert_sorted_index(index)
        self.assert_two_dimensional_input(x, dim)

        return to_dense_batch(
            x,
            index,
            batch_size=dim_size,
            fill_value=fill_value,
            max_num_nodes=max_num_elements,
        )


class SortAggregation(Aggregation):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: Tensor, index: Optional[Tensor] = None,
                ptr: Optional[Tensor] = None, dim_size: Optional[int] = None,
                dim: int = -2,
                max_num_elements: Optional[int] = None) -> Tensor:

        fill_value = x.min().item() - 1
        batch_x, _ = self.to_dense_batch(x, index, ptr, dim_size, dim,
                                         fill_value=fill_value,
                                         max_num_elements=max_num_elements)
        B, N, D = batch_x.size()

        _, perm = batch_x[:, :, -1].sort(dim=-1, descending=True)
        arange = torch.arange(B, dtype=torch.long, device=perm.device) * N
        perm = perm + arange.view(-1, 1)

        batch_x = batch_x.view(B * N, D)
        batch_x = batch_x[perm]
        batch_x = batch_x.view(B, N, D)

        if N >= self.k:
            batch_x = batch_x[:, :self.k].contiguous()
        else:
            expand_batch_x = batch_x.new_full((B, self.k - N, D), fill_value)
            batch_x = torch.cat([batch_x, expand_batch_x], dim=1)

        batch_x[batch_x == fill_value] = 0
        x = batch_x.view(B, self.k * D)

        return x


class DGCNNReadout(torch.nn.Module):
    """A GNN layer, then the SortPool readout and a linear classifier (as in DGCNN)."""

    def __init__(self, in_dim=3, hidden=4, k=3, classes=2):
        super().__init__()
        self.lin = torch.nn.Linear(in_dim, hidden)
        self.pool = SortAggregation(k)
        self.head = torch.nn.Linear(k * hidden, classes)

    def forward(self, x, batch, num_graphs=None):
        h = torch.tanh(self.lin(x))
        return self.head(self.pool(h, batch, dim_size=num_graphs))


def make():
    torch.manual_seed(0)
    return DGCNNReadout()


def inputs():
    g = torch.Generator().manual_seed(0)

    def x(n):
        return torch.randn(n, 3, generator=g)

    T = torch.tensor
    return [
        (x(7), T([0, 0, 0, 1, 1, 1, 1])),                 # N = 4 >= k
        (x(5), T([0, 0, 1, 1, 1]), 2),                    # N = 3 == k, dim_size given
        (x(4), T([0, 1, 1, 2]), 3),                       # N = 2 < k: padded with the fill value
        (x(3), T([0, 0, 0])),                             # a single graph
        (x(6), T([0, 0, 0, 0, 0, 1])),                    # uneven sizes
        (x(5), T([0, 1, 2, 3, 4]), 5),                    # one node per graph
        (x(8), T([0, 0, 1, 1, 1, 1, 1, 2]), 4),           # an empty last graph (dim_size > max + 1)
        (x(2), T([0, 1])),
        (x(9), T([0, 0, 0, 1, 1, 1, 2, 2, 2]), 3),
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(4, 3, generator=g), torch.tensor([0, 1, 0, 1]), 2)]  # unsorted index


KIND = "item+dynamic-shape"
GRAD = True
