"""torch_scatter's pure-PyTorch `scatter_sum` (what `scatter_add` / `scatter(reduce="sum")` call), used
without `dim_size` by a PiNet-style interaction layer that sums pair messages onto atoms: the output
size is read from the index with `int(index.max()) + 1`.

Source: https://github.com/rusty1s/pytorch_scatter/issues/457 ("Warning: graph break when compile
model with scatter_add": `Graph break from Tensor.item()` in molpot's pinet.py forward) and
https://github.com/rusty1s/pytorch_scatter/blob/master/torch_scatter/scatter.py (`scatter_sum`,
`scatter_add`) with torch_scatter/utils.py (`broadcast`). The PiNet layer is reduced to a pair
interaction (PI) and an interaction-pooling step (IP) with tiny widths.

Breaks: `int(index.max()) + 1` (Tensor.item() through `int`).

HAND: none — the output has `index.max() + 1` rows, a data-dependent shape; the caller does not pass
`dim_size`, and the number of atoms is not otherwise known (the largest index need not be the last
atom), so no rewrite keeps the shape without reading the value.
"""
from typing import Optional

import torch
from torch import nn

KIND = "int(tensor)"
GRAD = True


def broadcast(src: torch.Tensor, other: torch.Tensor, dim: int):
    if dim < 0:
        dim = other.dim() + dim
    if src.dim() == 1:
        for _ in range(0, dim):
            src = src.unsqueeze(0)
    for _ in range(src.dim(), other.dim()):
        src = src.unsqueeze(-1)
    src = src.expand(other.size())
    return src


def scatter_sum(src: torch.Tensor, index: torch.Tensor, dim: int = -1,
                out: Optional[torch.Tensor] = None,
                dim_size: Optional[int] = None) -> torch.Tensor:
    index = broadcast(index, src, dim)
    if out is None:
        size = list(src.size())
        if dim_size is not None:
            size[dim] = dim_size
        elif index.numel() == 0:
            size[dim] = 0
        else:
            size[dim] = int(index.max()) + 1
        out = torch.zeros(size, dtype=src.dtype, device=src.device)
        return out.scatter_add_(dim, index, src)
    else:
        return out.scatter_add_(dim, index, src)


def scatter_add(src: torch.Tensor, index: torch.Tensor, dim: int = -1,
                out: Optional[torch.Tensor] = None,
                dim_size: Optional[int] = None) -> torch.Tensor:
    return scatter_sum(src, index, dim, out, dim_size)


class PiNetInteraction(nn.Module):
    def __init__(self, n_prop=4, n_basis=3):
        super().__init__()
        self.pi = nn.Linear(2 * n_prop, n_prop * n_basis)
        self.ii = nn.Linear(n_prop, n_prop)
        self.n_prop, self.n_basis = n_prop, n_basis

    def forward(self, p1, idx_i, idx_j, basis):
        # PI layer: pair interaction from the two atoms' properties, weighted by the radial basis
        pair = torch.cat([p1[idx_i], p1[idx_j]], dim=-1)
        w = self.pi(pair).view(-1, self.n_prop, self.n_basis)
        inter = torch.tanh(torch.einsum("pcb,pb->pc", w, basis))
        # IP layer: pool the pair messages onto atom i
        pooled = scatter_add(inter, idx_i, dim=0)
        return p1[: pooled.shape[0]] + self.ii(pooled)


def make():
    torch.manual_seed(0)
    return PiNetInteraction()


def inputs():
    torch.manual_seed(0)
    out = []
    for n_atoms, idx_i, idx_j in [
        (3, [0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1]),
        (4, [0, 1, 2, 3], [1, 0, 3, 2]),
        (4, [0, 1, 1, 2], [1, 0, 2, 1]),          # atom 3 has no pair: 3 rows out
        (2, [0, 1], [1, 0]),
        (5, [0, 0, 0, 0, 4], [1, 2, 3, 4, 0]),
        (5, [1, 2, 2, 1], [2, 1, 1, 2]),          # largest index 2: 3 rows out
        (3, [0], [1]),                            # one pair: 1 row out
        (6, [5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5]),
    ]:
        i, j = torch.tensor(idx_i), torch.tensor(idx_j)
        out.append((torch.randn(n_atoms, 4), i, j, torch.rand(len(idx_i), 3)))
    return out
