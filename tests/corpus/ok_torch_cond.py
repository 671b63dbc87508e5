"""torch.cond keeps a data-dependent choice inside one graph: no break."""
import torch


@torch.compile
def f(x):
    return torch.cond(x.sum() > 0, lambda t: t + 1, lambda t: t - 1, (x,))


def sample():
    return [(f, (torch.ones(4),), {}), (f, (-torch.ones(4),), {})]
