"""Hand rewrite of dgl_graphconv_zero_in_degree: the zero-in-degree check in an ORDERED custom op."""
import torch
import torch.nn as nn
from torch._library.effects import EffectType


class DGLError(Exception):
    pass


_ZERO_IN_DEGREE_MSG = ('There are 0-in-degree nodes in the graph, '
                       'output for those nodes will be invalid. '
                       'This is harmful for some applications, '
                       'causing silent performance regression. '
                       'Adding self-loop on the input graph by '
                       'calling `g = dgl.add_self_loop(g)` will resolve '
                       'the issue. Setting ``allow_zero_in_degree`` '
                       'to be `True` when constructing this module will '
                       'suppress the check and let the code run.')


@torch.library.custom_op("blind_a::dgl_check_zero_in_degree", mutates_args=())
def _check_zero_in_degree(in_degrees: torch.Tensor) -> None:
    if (in_degrees == 0).any():
        raise DGLError(_ZERO_IN_DEGREE_MSG)


@_check_zero_in_degree.register_fake
def _(in_degrees):
    return None


_check_zero_in_degree.register_effect(EffectType.ORDERED)


class Graph:
    def __init__(self, src, dst, num_nodes):
        self.src = src
        self.dst = dst
        self.num_nodes = num_nodes

    def in_degrees(self):
        return torch.zeros(self.num_nodes, dtype=torch.int64).index_add_(0, self.dst, torch.ones_like(self.dst))

    def out_degrees(self):
        return torch.zeros(self.num_nodes, dtype=torch.int64).index_add_(0, self.src, torch.ones_like(self.src))

    def copy_u_sum(self, h):
        out = h.new_zeros((self.num_nodes,) + h.shape[1:])
        return out.index_add_(0, self.dst, h[self.src])


class GraphConv(nn.Module):
    def __init__(self, in_feats, out_feats, norm="both", weight=True, bias=True, activation=None,
                 allow_zero_in_degree=False):
        super().__init__()
        if norm not in ("none", "both", "right", "left"):
            raise DGLError('Invalid norm value. Must be either "none", "both", "right" or "left".'
                           ' But got "{}".'.format(norm))
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        if weight:
            self.weight = nn.Parameter(torch.Tensor(in_feats, out_feats))
        else:
            self.register_parameter("weight", None)
        if bias:
            self.bias = nn.Parameter(torch.Tensor(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()
        self._activation = activation

    def reset_parameters(self):
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, graph, feat, weight=None):
        if not self._allow_zero_in_degree:
            _check_zero_in_degree(graph.in_degrees())

        feat_src, feat_dst = feat, feat
        if self._norm in ["left", "both"]:
            degs = graph.out_degrees().to(feat_src).clamp(min=1)
            if self._norm == "both":
                norm = torch.pow(degs, -0.5)
            else:
                norm = 1.0 / degs
            shp = norm.shape + (1,) * (feat_src.dim() - 1)
            norm = torch.reshape(norm, shp)
            feat_src = feat_src * norm

        if weight is not None:
            if self.weight is not None:
                raise DGLError("External weight is provided while at the same time the"
                               " module has defined its own weight parameter. Please"
                               " create the module with flag weight=False.")
        else:
            weight = self.weight

        if self._in_feats > self._out_feats:
            # mult W first to reduce the feature size for aggregation.
            if weight is not None:
                feat_src = torch.matmul(feat_src, weight)
            rst = graph.copy_u_sum(feat_src)
        else:
            # aggregate first then mult W
            rst = graph.copy_u_sum(feat_src)
            if weight is not None:
                rst = torch.matmul(rst, weight)

        if self._norm in ["right", "both"]:
            degs = graph.in_degrees().to(feat_dst).clamp(min=1)
            if self._norm == "both":
                norm = torch.pow(degs, -0.5)
            else:
                norm = 1.0 / degs
            shp = norm.shape + (1,) * (feat_dst.dim() - 1)
            norm = torch.reshape(norm, shp)
            rst = rst * norm

        if self.bias is not None:
            rst = rst + self.bias

        if self._activation is not None:
            rst = self._activation(rst)

        return rst


class GCN(nn.Module):
    def __init__(self, in_size=5, hid_size=8, out_size=3):
        super().__init__()
        self.layers = nn.ModuleList([
            GraphConv(in_size, hid_size, activation=torch.relu),
            GraphConv(hid_size, out_size),
        ])

    def forward(self, src, dst, features):
        g = Graph(src, dst, features.shape[0])
        h = features
        for layer in self.layers:
            h = layer(g, h)
        return h


def make():
    torch.manual_seed(0)
    return GCN()


def _graph(n, extra_edges, g, self_loops=True):
    src = torch.randint(0, n, (extra_edges,), generator=g)
    dst = torch.randint(0, n, (extra_edges,), generator=g)
    if self_loops:
        loop = torch.arange(n)
        src, dst = torch.cat([src, loop]), torch.cat([dst, loop])
    return src, dst


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for n, e in [(4, 6), (6, 3), (3, 0), (8, 20), (5, 5), (7, 10), (2, 1), (10, 15)]:
        src, dst = _graph(n, e, g)
        out.append((src, dst, torch.randn(n, 5, generator=g)))
    # a ring without self-loops: every node has in-degree 1
    out.append((torch.arange(5), torch.arange(1, 6) % 5, torch.randn(5, 5, generator=g)))
    return out


def failing_inputs():
    # node 3 receives no edge
    return [
        (torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 0, 0]), torch.randn(4, 5)),
        (torch.tensor([0, 1]), torch.tensor([1, 0]), torch.randn(3, 5)),
    ]


KIND = "branch-raise"
GRAD = True
