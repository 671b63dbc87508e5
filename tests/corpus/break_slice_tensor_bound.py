"""A slice bounded by a tensor (`y[:n]`) cannot be resumed: the rest runs eagerly (GM205)."""
import torch


@torch.compile
def truncate(x):
    y = x.sort(descending=True).values
    n = (y > 0).sum()
    kept = y[:n]  # expect: GM205
    return kept.sum() + 1


def sample():
    return truncate, (torch.randn(8),), {}
