"""PyTorch Geometric `utils.softmax` — hand rewrite.

Sources: https://github.com/pyg-team/pytorch_geometric/blob/master/torch_geometric/utils/_softmax.py
and torch_geometric/utils/num_nodes.py

HAND: when the group count is not given (`num_nodes is None`), the per-group max and sum are taken
per element with a pairwise same-group mask (`index[:, None] == index[None, :]`), so no
`int(index.max())` is needed; values and gradients are the same. Calls with `num_nodes` keep
the original path.
"""
import torch

KIND = "int(tensor) as size"
GRAD = True


def maybe_num_nodes(edge_index, num_nodes=None):
    if num_nodes is not None:
        return num_nodes
    elif isinstance(edge_index, torch.Tensor):
        return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0
    else:
        return max(edge_index.size(0), edge_index.size(1))


def broadcast(src, ref, dim):
    size = ((1,) * dim) + (-1,) + ((1,) * (ref.dim() - dim - 1))
    return src.view(size).expand_as(ref)


def scatter(src, index, dim=0, dim_size=None, reduce="sum"):
    if dim < 0:
        dim = src.dim() + dim
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = src.size()[:dim] + (dim_size,) + src.size()[dim + 1:]
    if reduce == "sum" or reduce == "add":
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_add_(dim, index, src)
    if reduce == "max" or reduce == "min":
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_reduce_(dim, index, src, reduce=f"a{reduce}", include_self=False)
    raise ValueError(f"Encountered invalid `reduce` argument '{reduce}'")


def softmax(src, index=None, ptr=None, num_nodes=None, dim=0):
    if ptr is not None:
        raise NotImplementedError("CSR `ptr` path (torch_scatter.segment_csr) is not part of this reduction")
    elif index is not None and num_nodes is None:
        dim = dim + src.dim() if dim < 0 else dim
        x = src.movedim(dim, 0)
        same = (index.unsqueeze(1) == index.unsqueeze(0)).view(index.numel(), index.numel(), *([1] * (x.dim() - 1)))
        neg_inf = torch.full((), float("-inf"), dtype=x.dtype)
        src_max = torch.where(same, x.detach().unsqueeze(0), neg_inf).amax(dim=1)
        out = (x - src_max).exp()
        out_sum = torch.where(same, out.unsqueeze(0), torch.zeros((), dtype=x.dtype)).sum(dim=1) + 1e-16
        return (out / out_sum).movedim(0, dim)
    elif index is not None:
        N = maybe_num_nodes(index, num_nodes)
        src_max = scatter(src.detach(), index, dim, dim_size=N, reduce="max")
        out = src - src_max.index_select(dim, index)
        out = out.exp()
        out_sum = scatter(out, index, dim, dim_size=N, reduce="sum") + 1e-16
        out_sum = out_sum.index_select(dim, index)
    else:
        raise NotImplementedError("'softmax' requires 'index' to be specified")

    return out / out_sum


def make():
    return softmax


def inputs():
    torch.manual_seed(0)
    index = torch.tensor([0, 0, 1, 2, 2, 2, 4, 1])
    return [
        (torch.randn(8), index),
        (torch.randn(8, 3), index),  # multi-head attention logits (E, H)
        (torch.randn(8, 3), index, None, 6),  # num_nodes given: no conversion
        (torch.randn(5), torch.tensor([3, 3, 3, 3, 3])),
        (torch.randn(6, 2) * 30, torch.tensor([1, 0, 1, 0, 1, 0])),
        (torch.randn(4), torch.tensor([0, 1, 2, 3])),
        (torch.randn(7, 2), torch.tensor([0, 0, 0, 1, 1, 2, 2]), None, 3),
        (torch.randn(8, 2), index, None, None, -2),
        (torch.randn(6, dtype=torch.float64), torch.tensor([2, 0, 2, 0, 1, 1])),
    ]


def failing_inputs():
    return [(torch.randn(3),)]
