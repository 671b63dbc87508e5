"""A local is_torchdynamo_compiling() helper (transformers' style) guards eager-only code: no break."""
import warnings

import torch


def is_torchdynamo_compiling():
    return torch.compiler.is_compiling()


@torch.compile
def f(x):
    if not is_torchdynamo_compiling():
        warnings.warn("slow path")
    return x * 2
