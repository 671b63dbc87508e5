"""`with torch.device("cpu"):` is itself an unsupported context manager: dynamo skips the whole function (GM514)."""
import torch


@torch.compile
def f(x):
    y = x * 2
    with torch.device("cpu"):  # expect: GM514
        buf = torch.zeros(4)
    return y + buf
