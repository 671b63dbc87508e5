"""getattr(torch, "relu") with a constant name resolves at trace time: no break."""
import torch


@torch.compile
def apply(x, act="relu"):
    fn = getattr(torch, act)
    return fn(x)


def sample():
    return [(apply, (torch.randn(4),), {}), (apply, (torch.randn(4),), {"act": "sigmoid"})]
