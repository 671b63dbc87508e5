"""`requires_grad_()` on an intermediate (to read its gradient later) splits the graph (GM507)."""
import torch


@torch.compile
def f(x):
    emb = x * 3
    emb.requires_grad_()  # expect: GM507
    return emb.sin()
