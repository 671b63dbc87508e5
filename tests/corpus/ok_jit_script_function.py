"""A torch.jit.script-decorated FUNCTION called from compiled code is traced: no break."""
import torch


@torch.jit.script
def gelu_approx(t: torch.Tensor) -> torch.Tensor:
    return t * torch.sigmoid(1.702 * t)


@torch.compile
def f(x):
    return gelu_approx(x) + 1
