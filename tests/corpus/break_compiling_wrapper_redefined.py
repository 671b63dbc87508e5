"""A wrapper of torch's compiling query defined again later in the module: calls see the last
definition, which here returns False, so the guarded code runs under compile and breaks."""
import torch


def is_compiling() -> bool:
    return torch.compiler.is_compiling()


def is_compiling() -> bool:  # noqa: F811
    return False


@torch.compile
def f(x):
    if not is_compiling():
        print("eager only")  # expect: GM301
    return x * 2
