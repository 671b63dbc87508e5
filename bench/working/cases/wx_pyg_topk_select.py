"""PyG TopKPooling's node selection (torch_geometric.nn.pool.select.topk.SelectTopK.forward + topk),
the "gPool"/"SAGPool"-style score-and-keep-top-ratio step used inside graph classification models.

Source: https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/nn/pool/select/topk.py
        https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/utils/_scatter.py (scatter, sum/max)
Breaks: `int(num_nodes.max())` (tensor -> Python int), `(k == ratio).all()` in an `if`, and the per-graph
        list comprehension `torch.arange(k[i], ...)` whose lengths are tensor data (data-dependent output size);
        the `min_score` path has `(x > scores_min).nonzero()` (data-dependent shape). `scatter` is reduced to
        PyG's pure-torch path (`dim_size = int(index.max()) + 1` when not given, scatter_add_/scatter_reduce_).
        SelectOutput is returned as a tuple (node_index, cluster_index, num_clusters, weight).
HAND: none — the selected node set has a data-dependent size (it depends on the per-graph node counts in
      `batch` and, with min_score, on the scores), and `num_clusters` is returned as a Python int.
"""
import math
from typing import Callable, Optional, Union

import torch
from torch import Tensor

KIND = "data-dependent size (item/arange per graph)"
GRAD = True


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None,
            reduce: str = 'sum') -> Tensor:
    # reduced from torch_geometric.utils._scatter.scatter (1-D index, dim=0)
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0

    size = list(src.size())
    size[dim] = dim_size

    if reduce == 'sum' or reduce == 'add':
        index = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
        return src.new_zeros(size).scatter_add_(dim, index, src)

    if reduce == 'max':
        index = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
        return src.new_zeros(size).scatter_reduce_(dim, index, src, reduce='amax', include_self=False)

    raise ValueError(f"Encountered invalid `reduce` argument '{reduce}'")


def softmax(src: Tensor, index: Tensor, num_nodes: Optional[int] = None) -> Tensor:
    # reduced from torch_geometric.utils._softmax.softmax (index path)
    N = int(index.max()) + 1 if num_nodes is None else num_nodes
    src_max = scatter(src.detach(), index, 0, dim_size=N, reduce='max')
    out = src - src_max.index_select(0, index)
    out = out.exp()
    out_sum = scatter(out, index, 0, dim_size=N, reduce='sum') + 1e-16
    out_sum = out_sum.index_select(0, index)
    return out / out_sum


def topk(
    x: Tensor,
    ratio: Optional[Union[float, int]],
    batch: Tensor,
    min_score: Optional[float] = None,
    tol: float = 1e-7,
) -> Tensor:
    if min_score is not None:
        # Make sure that we do not drop all nodes in a graph.
        scores_max = scatter(x, batch, reduce='max')[batch] - tol
        scores_min = scores_max.clamp(max=min_score)

        perm = (x > scores_min).nonzero().view(-1)
        return perm

    if ratio is not None:
        num_nodes = scatter(batch.new_ones(x.size(0)), batch, reduce='sum')
        batch_size, max_num_nodes = num_nodes.size(0), int(num_nodes.max())

        cum_num_nodes = torch.cat(
            [num_nodes.new_zeros(1),
             num_nodes.cumsum(dim=0)[:-1]], dim=0)

        index = torch.arange(batch.size(0), dtype=torch.long, device=x.device)
        index = (index - cum_num_nodes[batch]) + (batch * max_num_nodes)

        dense_x = x.new_full((batch_size * max_num_nodes, ), -60000.0)
        dense_x[index] = x
        dense_x = dense_x.view(batch_size, max_num_nodes)

        _, perm = dense_x.sort(dim=-1, descending=True)

        perm = perm + cum_num_nodes.view(-1, 1)
        perm = perm.view(-1)

        if ratio >= 1:
            k = num_nodes.new_full((num_nodes.size(0), ), int(ratio))
            k = torch.min(k, num_nodes)
        else:
            k = (float(ratio) * num_nodes.to(x.dtype)).ceil().to(torch.long)

        if isinstance(ratio, int) and (k == ratio).all():
            # If all graphs have exactly `ratio` or more than `ratio` entries,
            # we can just pick the first entries in `perm` batch-wise:
            index = torch.arange(batch_size, device=x.device) * max_num_nodes
            index = index.view(-1, 1).repeat(1, ratio).view(-1)
            index += torch.arange(ratio, device=x.device).repeat(batch_size)
        else:
            # Otherwise, compute indices per graph:
            index = torch.cat([
                torch.arange(k[i], device=x.device) + i * max_num_nodes
                for i in range(batch_size)
            ], dim=0)

        perm = perm[index]
        return perm

    raise ValueError("At least one of the 'ratio' and 'min_score' parameters "
                     "must be specified")


class SelectTopK(torch.nn.Module):
    def __init__(
        self,
        in_channels: int,
        ratio: Union[int, float] = 0.5,
        min_score: Optional[float] = None,
        act: Callable = torch.tanh,
    ):
        super().__init__()

        if ratio is None and min_score is None:
            raise ValueError(f"At least one of the 'ratio' and 'min_score' "
                             f"parameters must be specified in "
                             f"'{self.__class__.__name__}'")

        self.in_channels = in_channels
        self.ratio = ratio
        self.min_score = min_score
        self.act = act

        self.weight = torch.nn.Parameter(torch.empty(1, in_channels))

        self.reset_parameters()

    def reset_parameters(self):
        # torch_geometric.nn.inits.uniform
        bound = 1.0 / math.sqrt(self.in_channels)
        with torch.no_grad():
            self.weight.uniform_(-bound, bound)

    def forward(
        self,
        x: Tensor,
        batch: Optional[Tensor] = None,
    ):
        if batch is None:
            batch = x.new_zeros(x.size(0), dtype=torch.long)

        x.view(-1, 1) if x.dim() == 1 else x
        score = (x * self.weight).sum(dim=-1)

        if self.min_score is None:
            score = self.act(score / self.weight.norm(p=2, dim=-1))
        else:
            score = softmax(score, batch)

        node_index = topk(score, self.ratio, batch, self.min_score)

        return (node_index,
                torch.arange(node_index.size(0), device=x.device),
                node_index.size(0),
                score[node_index])


class TopKPoolBlock(torch.nn.Module):
    """Select + gate the kept node features (as TopKPooling.forward does with the SelectOutput)."""

    def __init__(self, in_channels=4, ratio=0.5, min_score=None):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, in_channels)
        self.select = SelectTopK(in_channels, ratio, min_score)

    def forward(self, x, batch):
        x = self.lin(x).relu()
        node_index, cluster_index, num_clusters, weight = self.select(x, batch)
        x = x[node_index] * weight.view(-1, 1)
        return x, batch[node_index], num_clusters


class _Multi(torch.nn.Module):
    """Three selectors (float ratio, int ratio, min_score) chosen by a Python flag."""

    def __init__(self):
        super().__init__()
        self.by_ratio = TopKPoolBlock(4, 0.5)
        self.by_count = TopKPoolBlock(4, 2)
        self.by_score = TopKPoolBlock(4, None, 0.3)

    def forward(self, x, batch, mode: str):
        if mode == "ratio":
            return self.by_ratio(x, batch)
        if mode == "count":
            return self.by_count(x, batch)
        return self.by_score(x, batch)


def make():
    torch.manual_seed(0)
    return _Multi()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    # (graph sizes, mode)
    specs = [
        ([3, 4], "ratio"),
        ([5, 2, 3], "ratio"),
        ([3, 4], "count"),        # all graphs have >= 2 nodes -> fast path
        ([1, 4, 2], "count"),     # one graph smaller than ratio -> per-graph path
        ([2, 2, 2], "count"),
        ([3, 4], "score"),
        ([6], "score"),
        ([1, 1, 3], "ratio"),
        ([4, 1], "count"),
    ]
    for sizes, mode in specs:
        n = sum(sizes)
        x = torch.randn(n, 4, generator=g)
        batch = torch.cat([torch.full((s,), i, dtype=torch.long) for i, s in enumerate(sizes)])
        out.append((x, batch, mode))
    return out
