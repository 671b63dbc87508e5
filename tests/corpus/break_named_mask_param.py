"""A parameter named as a mask (`padding_mask`, with no annotation) used as an index: its name is
the only evidence that it is boolean, and dynamo breaks on the selection (GM402). The masked copy
`out[m] = h[m]` reads `h[m]` first, the break's site."""
import torch


@torch.compile
def f(x, h, padding_mask):
    out = x.clone()
    out[padding_mask] = h[padding_mask]  # expect: GM402
    return out


def sample():
    return f, (torch.randn(6), torch.randn(6), torch.tensor([True, False, True, False, False, True])), {}
