"""`.item()` whose Python float feeds later arithmetic splits the graph (GM201)."""
import torch


@torch.compile
def normalize(x):
    y = x - x.mean()
    norm = y.norm().item()  # expect: GM201
    return y / (norm + 1e-6)


def sample():
    return normalize, (torch.randn(16),), {}
