"""Reading through a 0-d boolean mask (`s[x.sum() > 0]`) needs the mask's value, as a Python bool:
dynamo breaks ("Data dependent operator") even with capture_dynamic_output_shape_ops, which only
traces masks with elements (`s[x > 0]`, an unbacked count of selected elements: no break)."""
import torch

torch._dynamo.config.capture_dynamic_output_shape_ops = True


@torch.compile
def kept_if_positive(x):
    s = torch.ones(3)
    positive = x.sum() > 0
    return s[positive] + 1  # expect: GM205


@torch.compile
def kept_where_positive(x):
    s = torch.ones(3)
    positive = x > 0
    return s[positive] + 1


def sample():
    return [(kept_if_positive, (torch.randn(3),), {}), (kept_where_positive, (torch.randn(3),), {})]
