"""`not is_compiling() and x.item() > 0` short-circuits under dynamo: .item() never runs."""
import torch


@torch.compile
def f(x):
    y = x.sum()
    if not torch.compiler.is_compiling() and y.item() > 0:
        print("positive total")
    return x - y
