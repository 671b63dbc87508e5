"""A helper called in a loop of the compiled function breaks in its body: the caller runs eagerly (GM201 on the helper's line)."""
import torch


def layer_scale(h):
    return h * h.abs().mean().item()  # expect: GM201


@torch.compile
def f(x):
    for _ in range(2):
        x = layer_scale(x) + 1
    return x
