"""torch.jit.is_scripting() is False under dynamo: its body is dead, the else branch is traced."""
import torch


@torch.compile
def f(x):
    if torch.jit.is_scripting():
        print("scripting")
        y = x.item()
    else:
        y = x.sum()
    return x + y
