"""torch.onnx.is_in_onnx_export() is False under dynamo, so it does NOT protect a print."""
import torch


@torch.compile
def f(x):
    y = x * 2
    if not torch.onnx.is_in_onnx_export():
        print("eager run")  # expect: GM301
    return y + 1
