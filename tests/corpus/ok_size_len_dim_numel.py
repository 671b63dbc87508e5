"""size(), len(), dim() and numel() are shape metadata, known at trace time: no break."""
import torch


@torch.compile
def f(x):
    total = x.size(0) + len(x) + x.dim() + x.numel()
    return x * total
