"""The else of `if torch.jit.is_scripting()` is what dynamo traces, so a print there breaks."""
import torch


@torch.compile
def f(x):
    if torch.jit.is_scripting():
        y = x + 1
    else:
        print("eager or dynamo")  # expect: GM301
        y = x - 1
    return y * 2
