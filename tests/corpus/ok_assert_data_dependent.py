"""A data-dependent assert becomes a runtime assertion in the graph: no break."""
import torch


@torch.compile
def log_prob(p):
    assert (p >= 0).all(), "probabilities must be non-negative"
    return p.clamp_min(1e-6).log()


def sample():
    return (log_prob, (torch.rand(4),), {})
