"""`if` on a reduced tensor value (a residual gate) splits the graph (GM101)."""
import torch


@torch.compile
def gated_residual(x, h):
    gate = torch.sigmoid(h.mean())
    if gate > 0.5:  # expect: GM101
        out = x + h
    else:
        out = x
    return out.relu()


def sample():
    return gated_residual, (torch.randn(4), torch.randn(4)), {}
