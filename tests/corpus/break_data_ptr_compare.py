"""Comparing `data_ptr()` of a view and its base (an aliasing check) splits the graph (GM510)."""
import torch


@torch.compile
def f(x):
    flat = x.view(-1)
    aliased = flat.data_ptr() == x.data_ptr()  # expect: GM510
    return flat * 2 + int(aliased)
