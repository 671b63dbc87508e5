"""Assigning through a 0-d boolean mask (`out[x.sum() > 0] = 0.0`) needs the mask's value:
dynamo breaks ("Data dependent operator"), as for a 0-d integer index. Through a mask with
elements (`out[x > 0] = 0.0`) it is an index_put of fixed shape and does not break."""
import torch


@torch.compile
def cleared_if_positive(x):
    out = torch.ones(3)
    positive = x.sum() > 0
    out[positive] = 0.0  # expect: GM205
    return out + 1


@torch.compile
def cleared_where_positive(x):
    out = torch.ones(3)
    positive = x > 0
    out[positive] = 0.0
    return out + 1


def sample():
    return [(cleared_if_positive, (torch.randn(3),), {}), (cleared_where_positive, (torch.randn(3),), {})]
