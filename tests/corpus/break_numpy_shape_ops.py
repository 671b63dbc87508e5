"""NumPy's data-sized ops in compiled code run as tensor ops (torch._numpy) and break as their
torch forms do, on an array from `t.numpy()` and on a Python list alike (recbole's session graph
built with `np.unique` and `np.where(node == item)`); three-argument `np.where` selects values and
does not break."""
import numpy as np
import torch


@torch.compile
def distinct(x):
    a = x.numpy()
    u = np.unique(a)  # expect: GM404
    return torch.from_numpy(u) + 1


@torch.compile
def positions(x):
    a = x.numpy()
    i = np.where(a > 1)[0]  # expect: GM401
    return torch.from_numpy(i) + 1


@torch.compile
def nonzero_of_list(x):
    n = np.flatnonzero([0, 1, 1])  # expect: GM401
    return x + len(n)


@torch.compile
def selected(x):
    a = x.numpy()
    return torch.from_numpy(np.where(a > 1, a, 0)) + np.argwhere(a).sum()  # expect: GM401


def sample():
    x = torch.tensor([0, 1, 2, 2, 3])
    return [(f, (x,), {}) for f in (distinct, positions, nonzero_of_list, selected)]
