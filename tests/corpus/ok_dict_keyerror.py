"""try/except KeyError around a dict lookup is handled by dynamo: no break."""
import torch

SCALES = {"small": 0.5, "large": 2.0}


@torch.compile
def scale(x, name="medium"):
    try:
        factor = SCALES[name]
    except KeyError:
        factor = 1.0
    return x * factor


def sample():
    return [(scale, (torch.randn(4),), {}), (scale, (torch.randn(4),), {"name": "large"})]
