"""String operations on constants are evaluated at trace time: no break."""
import torch


@torch.compile
def activate(x, name="ReLU"):
    key = name.strip().lower()
    if key.startswith("relu"):
        return torch.relu(x)
    return torch.tanh(x)


def sample():
    return [(activate, (torch.randn(4),), {}), (activate, (torch.randn(4),), {"name": " Tanh "})]
