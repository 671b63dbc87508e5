"""`torch.manual_seed` inside compiled code (reseeding dropout) splits the graph (GM309)."""
import torch
import torch.nn.functional as F


@torch.compile
def f(x):
    y = x * 2
    torch.manual_seed(0)  # expect: GM309
    return F.dropout(y, p=0.1)
