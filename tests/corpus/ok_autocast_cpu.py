"""torch.autocast on CPU is a supported context manager: no break."""
import torch


@torch.compile
def f(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.mm(x.view(2, 2), x.view(2, 2))
    return y.float().sum()
