"""dtype and device checks read tensor metadata, not data: no break."""
import torch


@torch.compile
def to_float(x):
    if x.dtype != torch.float32:
        x = x.float()
    if x.device.type == "cpu":
        x = x + 1
    return x


def sample():
    return [(to_float, (torch.randn(4),), {}), (to_float, (torch.arange(4),), {})]
