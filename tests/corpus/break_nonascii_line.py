"""Non-ASCII text earlier on the same line as the break exercises column handling (GM201)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    stats = {"énergie → moyenne": y.mean().item()}  # expect: GM201
    return y + stats["énergie → moyenne"]
