"""torch.jit.is_tracing() is False under dynamo, so `if not is_tracing()` does NOT protect a print."""
import torch


@torch.compile
def f(x):
    y = x * 2
    if not torch.jit.is_tracing():
        print("not tracing")  # expect: GM301
    return y + 1
