"""A function dynamo runs eagerly (a data-dependent `np.unique` in a loop) runs each Python 3.11
comprehension in it as a frame of its own, which dynamo compiles alone when it holds a tensor or
an array (`node`). Over a NumPy array (a row
of `t.numpy()`) that frame's input is NumPy's iterator, which dynamo cannot iterate ("Missing
tp_iternext", frame skipped) although the analysis calls arrays tensors; over a tensor the
iterator is taken and the comprehension traces (recbole SR-GNN's `_get_slice`)."""
import numpy as np
import torch


@torch.compile
def positions_in_array(x):
    rows = x.numpy()
    out = []
    for row in rows:
        node = np.unique(row)  # expect: GM404
        out.append([  # expect: GM519
            int(node.searchsorted(i)) for i in row
        ])
    return torch.tensor(out) + 1


@torch.compile
def positions_in_tensor(x):
    out = []
    for row in x:
        node = torch.unique(row)  # expect: GM404
        out.append([
            torch.searchsorted(node, i) for i in row
        ])
    return x + len(out)


def sample():
    x = torch.tensor([[1, 2, 2], [3, 3, 1]])
    return [(positions_in_array, (x,), {}), (positions_in_tensor, (x,), {})]
