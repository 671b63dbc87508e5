"""`str(t)` formats tensor values and splits the graph (GM208)."""
import torch


@torch.compile
def f(x):
    y = x.tanh()
    label = "activations: " + str(y)  # expect: GM208
    return y * 2, label
