"""Each tensor test of an if/elif chain is its own break; both tests run on the second sample (GM101)."""
import torch


@torch.compile
def clip_update(grad):
    norm = grad.norm()
    if norm > 10:  # expect: GM101
        return grad * (10 / norm)
    elif norm < 1e-3:  # expect: GM101
        return torch.zeros_like(grad)
    return grad


def sample():
    return [
        (clip_update, (torch.full((4,), 100.0),), {}),
        (clip_update, (torch.full((4,), 1.0),), {}),
    ]
