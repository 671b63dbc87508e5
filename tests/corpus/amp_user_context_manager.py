"""A break under a user-defined context manager class makes dynamo skip the whole function (GM301, frame-skip)."""
import torch


class Scope:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@torch.compile
def f(x):
    y = x * 2
    with Scope("proj"):
        print("inside scope")  # expect: GM301
        y = y + 1
    return y * 3
