"""An early return guarded by `y.any()` (a NaN check) splits the graph (GM101)."""
import torch


@torch.compile
def safe_log(x):
    y = torch.log(x)
    if torch.isnan(y).any():  # expect: GM101
        return torch.zeros_like(y)
    return y * 2


def sample():
    return [
        (safe_log, (torch.rand(4) + 0.5,), {}),
        (safe_log, (torch.tensor([1.0, -1.0, 2.0, 3.0]),), {}),
    ]
