"""`sorted()` of candidate tensors keyed by a tensor score splits the graph (GM508)."""
import torch


@torch.compile
def best_candidate(x):
    candidates = [x * 2, x - 1, x.flip(0)]
    ranked = sorted(candidates, key=lambda c: c.norm())  # expect: GM508
    return ranked[0] + 1


def sample():
    return best_candidate, (torch.randn(4),), {}
