"""PyTorch Geometric graph classifier readout: global_mean_pool with the graph count taken from `batch`.

Source: https://github.com/pyg-team/pytorch_geometric/blob/2.2.0/torch_geometric/nn/pool/glob.py
        (global_mean_pool: `size = int(batch.max().item() + 1) if size is None else size`) and
        https://github.com/pyg-team/pytorch_geometric/blob/2.3.0/torch_geometric/utils/scatter.py (scatter, reduce='mean'),
        as used by the graph-classification examples (e.g. examples/mutag_gin.py: conv layers ->
        global pool -> MLP). Reduced: message-passing convs replaced by per-node Linear layers.

Breaks: `batch.max().item()` (Tensor.item with capture_scalar_outputs=False), and the Python int it
yields sets the output's number of rows.

HAND: none — the number of graphs (rows of the output) is read from the values of `batch`; any
rewrite that keeps the size unknown to the caller still needs a data-dependent output shape.
"""
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

KIND = ".item() -> output size"
GRAD = True


def broadcast(src: Tensor, ref: Tensor, dim: int) -> Tensor:
    size = ((1, ) * dim) + (-1, ) + ((1, ) * (ref.dim() - dim - 1))
    return src.view(size).expand_as(ref)


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None, reduce: str = 'sum') -> Tensor:
    if index.dim() != 1:
        raise ValueError(f"The `index` argument must be one-dimensional "
                         f"(got {index.dim()} dimensions)")

    dim = src.dim() + dim if dim < 0 else dim

    if dim < 0 or dim >= src.dim():
        raise ValueError(f"The `dim` argument must lay between 0 and "
                         f"{src.dim() - 1} (got {dim})")

    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0

    size = list(src.size())
    size[dim] = dim_size

    if reduce == 'sum' or reduce == 'add':
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_add_(dim, index, src)

    if reduce == 'mean':
        count = src.new_zeros(dim_size)
        count.scatter_add_(0, index, src.new_ones(src.size(dim)))
        count = count.clamp(min=1)

        index = broadcast(index, src, dim)
        out = src.new_zeros(size).scatter_add_(dim, index, src)

        return out / broadcast(count, out, dim)

    raise ValueError(f"Encountered invalid `reduce` argument '{reduce}'")


def global_mean_pool(x: Tensor, batch: Optional[Tensor], size: Optional[int] = None) -> Tensor:
    dim = -1 if x.dim() == 1 else -2

    if batch is None:
        return x.mean(dim=dim, keepdim=x.dim() <= 2)
    size = int(batch.max().item() + 1) if size is None else size
    return scatter(x, batch, dim=dim, dim_size=size, reduce='mean')


class GraphClassifier(nn.Module):
    def __init__(self, in_channels=5, hidden_channels=8, out_channels=3, num_layers=2):
        super().__init__()
        self.lins = nn.ModuleList()
        for _ in range(num_layers):
            self.lins.append(nn.Linear(in_channels, hidden_channels))
            in_channels = hidden_channels
        self.mlp = nn.Sequential(nn.Linear(hidden_channels, hidden_channels), nn.ReLU(),
                                 nn.Linear(hidden_channels, out_channels))

    def forward(self, x, batch):
        for lin in self.lins:
            x = F.relu(lin(x))
        x = global_mean_pool(x, batch)
        return self.mlp(x)


def make():
    torch.manual_seed(0)
    return GraphClassifier()


def inputs():
    g = torch.Generator().manual_seed(0)

    def mk(counts):
        batch = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
        return (torch.randn(int(sum(counts)), 5, generator=g), batch)

    return [
        mk([3, 4, 2]),
        mk([5]),
        mk([1, 1, 1, 1]),
        mk([2, 6]),
        (torch.randn(7, 5, generator=g), None),                      # no batch vector: plain mean
        (torch.randn(6, 5, generator=g), torch.tensor([0, 0, 2, 2, 2, 3])),   # graph 1 empty (count clamp)
        mk([4, 4, 4]),
        mk([10, 1]),
    ]
