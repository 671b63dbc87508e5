"""PyG RGCNConv.forward (no basis/block decomposition and with basis decomposition; aggr='mean'), the
relational GCN layer for knowledge graphs, as reported in "RGCNConv has multiple graph breaks"
(pyg-team/pytorch_geometric#8467), i.e. the version before the compile fix of #8783.

Source: https://github.com/pyg-team/pytorch_geometric/issues/8467
        https://github.com/pyg-team/pytorch_geometric/blob/2.4.0/torch_geometric/nn/conv/rgcn_conv.py
        (read at https://github.com/pyg-team/pytorch_geometric/blob/01bf11b42198eeeb55d9065dd0d5447bbdb570e0/torch_geometric/nn/conv/rgcn_conv.py)
        https://github.com/pyg-team/pytorch_geometric/blob/2.4.0/torch_geometric/backend.py
        https://github.com/pyg-team/pytorch_geometric/blob/2.4.0/torch_geometric/utils/mask.py (masked_edge_index)
Breaks: `max_segment_size=int(segment_count.max())` (tensor -> Python int) feeding
        `torch_geometric.backend.use_segment_matmul_heuristic`, whose `return bool(x @ weight >= bias)` converts a
        tensor to a Python bool (the two breaks named in the issue); then, per relation,
        `masked_edge_index(edge_index, edge_type == i)` = `edge_index[:, edge_mask]` (boolean-mask indexing,
        data-dependent number of edges). pyg-lib is absent (WITH_SEGMM = False), so the per-relation loop runs.
        MessagePassing.propagate is reduced to gather + scatter-mean.
HAND: partial — the per-relation boolean edge selection becomes a masked scatter-mean over all edges (messages
      of other relations weighted by 0, counts from the same mask, clamped to 1 as PyG's mean does); the
      heuristic (int()/bool()) is kept, because its Python-bool result is stored on the module
      (`self._use_segment_matmul_heuristic_output`).
"""
import math
from typing import Optional, Tuple, Union

import torch
from torch import Tensor
from torch.nn import Parameter

KIND = "int()/bool() heuristic + boolean edge mask (GNN)"
GRAD = True


class _Backend:
    use_segment_matmul: Optional[bool] = None

    @staticmethod
    def use_segment_matmul_heuristic(
        num_segments: int,
        max_segment_size: int,
        in_channels: int,
        out_channels: int,
    ) -> bool:
        r"""A heuristic based on input sizes to determine whether the usage of
        :meth:`segment_matmul` can speed up computation.
        """
        # NOTE This heuristic was learned on an A100 via sklearn using a simple
        # StandardScaler() -> LinearSVC() model.
        # For now, it is only used in combination with `RGCNConv`.
        x = torch.tensor([
            num_segments,
            max_segment_size,
            in_channels,
            out_channels,
        ])
        mean = torch.tensor([
            125.11603189,
            12133.21523472,
            163.81222321,
            32.43755536,
        ])
        std = torch.tensor([
            163.34480422,
            27572.94543809,
            177.6426489,
            56.82103934,
        ])
        weight = torch.tensor([
            2.43877659e+00,
            1.67583047e+00,
            -5.20527282e-04,
            3.43925501e-01,
        ])
        bias = 1.20236999

        x = (x - mean) / std
        return bool(x @ weight >= bias)


class _Typing:
    WITH_SEGMM = False


class torch_geometric:  # namespace stub: torch_geometric.backend / torch_geometric.typing
    backend = _Backend
    typing = _Typing


def scatter(src: Tensor, index: Tensor, dim: int = 0, dim_size: Optional[int] = None,
            reduce: str = 'sum') -> Tensor:
    # reduced torch_geometric.utils.scatter (dim=0 / node_dim=-2 on 2-D src)
    if dim < 0:
        dim = src.dim() + dim
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = list(src.size())
    size[dim] = dim_size
    view = [1] * src.dim()
    view[dim] = -1
    idx = index.view(view).expand_as(src)
    if reduce == 'sum':
        return src.new_zeros(size).scatter_add_(dim, idx, src)
    if reduce == 'mean':
        count = src.new_zeros(dim_size)
        count.scatter_add_(0, index, src.new_ones(src.size(dim)))
        count = count.clamp(min=1)
        out = src.new_zeros(size).scatter_add_(dim, idx, src)
        return out / count.view([-1 if d == dim else 1 for d in range(src.dim())])
    raise ValueError(reduce)


def masked_edge_index(edge_index: Tensor, edge_mask: Tensor) -> Tensor:
    if isinstance(edge_index, Tensor):
        return edge_index[:, edge_mask]
    raise NotImplementedError  # torch_sparse path


def glorot(value):
    if value is not None:
        stdv = math.sqrt(6.0 / (value.size(-2) + value.size(-1)))
        with torch.no_grad():
            value.uniform_(-stdv, stdv)


def zeros(value):
    if value is not None:
        with torch.no_grad():
            value.fill_(0)


class RGCNConv(torch.nn.Module):
    def __init__(
        self,
        in_channels: Union[int, Tuple[int, int]],
        out_channels: int,
        num_relations: int,
        num_bases: Optional[int] = None,
        num_blocks: Optional[int] = None,
        aggr: str = 'mean',
        root_weight: bool = True,
        is_sorted: bool = False,
        bias: bool = True,
    ):
        super().__init__()
        self.aggr = aggr
        self.node_dim = 0

        if num_bases is not None and num_blocks is not None:
            raise ValueError('Can not apply both basis-decomposition and '
                             'block-diagonal-decomposition at the same time.')

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = num_relations
        self.num_bases = num_bases
        self.num_blocks = num_blocks
        self.is_sorted = is_sorted

        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)
        self.in_channels_l = in_channels[0]

        self._use_segment_matmul_heuristic_output: Optional[bool] = None

        if num_bases is not None:
            self.weight = Parameter(
                torch.empty(num_bases, in_channels[0], out_channels))
            self.comp = Parameter(torch.empty(num_relations, num_bases))
        else:
            self.weight = Parameter(
                torch.empty(num_relations, in_channels[0], out_channels))
            self.register_parameter('comp', None)

        if root_weight:
            self.root = Parameter(torch.empty(in_channels[1], out_channels))
        else:
            self.register_parameter('root', None)

        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def reset_parameters(self):
        glorot(self.weight)
        glorot(self.comp)
        glorot(self.root)
        zeros(self.bias)

    def propagate(self, edge_index, x, edge_type_ptr, size):
        # reduced MessagePassing.propagate: message (x_j) + mean aggregation at the target nodes
        x_j = x.index_select(self.node_dim, edge_index[0])
        msg = self.message(x_j, edge_type_ptr)
        return scatter(msg, edge_index[1], dim=self.node_dim, dim_size=size[1], reduce=self.aggr)

    def forward(self, x: Union[Optional[Tensor], Tuple[Optional[Tensor], Tensor]],
                edge_index: Tensor, edge_type: Optional[Tensor] = None):
        # Convert input features to a pair of node features or node indices.
        x_l: Optional[Tensor] = None
        if isinstance(x, tuple):
            x_l = x[0]
        else:
            x_l = x
        if x_l is None:
            x_l = torch.arange(self.in_channels_l, device=self.weight.device)

        x_r: Tensor = x_l
        if isinstance(x, tuple):
            x_r = x[1]

        size = (x_l.size(0), x_r.size(0))
        assert edge_type is not None

        # propagate_type: (x: Tensor, edge_type_ptr: OptTensor)
        out = torch.zeros(x_r.size(0), self.out_channels, device=x_r.device)

        weight = self.weight
        if self.num_bases is not None:  # Basis-decomposition =================
            weight = (self.comp @ weight.view(self.num_bases, -1)).view(
                self.num_relations, self.in_channels_l, self.out_channels)

        if self.num_blocks is not None:  # Block-diagonal-decomposition =====
            raise NotImplementedError  # omitted in this reduction

        else:  # No regularization/Basis-decomposition ========================

            use_segment_matmul = torch_geometric.backend.use_segment_matmul
            # If `use_segment_matmul` is not specified, use a simple heuristic
            # to determine whether `segment_matmul` can speed up computation
            # given the observed input sizes:
            if use_segment_matmul is None:
                segment_count = scatter(torch.ones_like(edge_type), edge_type,
                                        dim_size=self.num_relations)

                self._use_segment_matmul_heuristic_output = (
                    torch_geometric.backend.use_segment_matmul_heuristic(
                        num_segments=self.num_relations,
                        max_segment_size=int(segment_count.max()),
                        in_channels=self.weight.size(1),
                        out_channels=self.weight.size(2),
                    ))

                assert self._use_segment_matmul_heuristic_output is not None
                use_segment_matmul = self._use_segment_matmul_heuristic_output

            use_segment_matmul &= self.num_bases is None
            use_segment_matmul &= x_l.is_floating_point()
            use_segment_matmul &= isinstance(edge_index, Tensor)

            if use_segment_matmul and torch_geometric.typing.WITH_SEGMM:
                raise NotImplementedError  # pyg-lib segment_matmul path
            else:
                for i in range(self.num_relations):
                    tmp = masked_edge_index(edge_index, edge_type == i)

                    if not torch.is_floating_point(x_r):
                        out = out + self.propagate(
                            tmp,
                            x=weight[i, x_l],
                            edge_type_ptr=None,
                            size=size,
                        )
                    else:
                        h = self.propagate(tmp, x=x_l, edge_type_ptr=None,
                                           size=size)
                        out = out + (h @ weight[i])

        root = self.root
        if root is not None:
            if not torch.is_floating_point(x_r):
                out = out + root[x_r]
            else:
                out = out + x_r @ root

        if self.bias is not None:
            out = out + self.bias

        return out

    def message(self, x_j: Tensor, edge_type_ptr: Optional[Tensor]) -> Tensor:
        return x_j


class RGCN(torch.nn.Module):
    """Two-layer entity-classification R-GCN (featureless first layer, as in the PyG example), plus a
    feature-input variant with basis decomposition."""

    def __init__(self, num_nodes=6, hidden=5, num_relations=3):
        super().__init__()
        self.conv1 = RGCNConv(num_nodes, hidden, num_relations)
        self.conv2 = RGCNConv(hidden, 3, num_relations, num_bases=2)
        self.conv_feat = RGCNConv(4, hidden, num_relations)

    def forward(self, x, edge_index, edge_type):
        if x is None:
            h = self.conv1(None, edge_index, edge_type).relu()
        else:
            h = self.conv_feat(x, edge_index, edge_type).relu()
        return self.conv2(h, edge_index, edge_type)


def make():
    torch.manual_seed(0)
    return RGCN()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for featureless, n_edges, rel_hi in [(True, 10, 3), (False, 12, 3), (True, 7, 2), (False, 5, 1),
                                         (True, 16, 3), (False, 9, 2), (True, 4, 3), (False, 14, 3)]:
        n = 6
        edge_index = torch.randint(0, n, (2, n_edges), generator=g)
        edge_type = torch.randint(0, rel_hi, (n_edges,), generator=g)   # rel_hi < 3: a relation without edges
        x = None if featureless else torch.randn(n, 4, generator=g)
        out.append((x, edge_index, edge_type))
    return out
