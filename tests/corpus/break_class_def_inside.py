"""A class defined inside compiled code (a local config holder) splits the graph (GM503)."""
import torch


@torch.compile
def f(x):
    y = x * 2

    class Cfg:  # expect: GM503
        eps = 1e-5

    return y / (y.norm() + Cfg.eps)
