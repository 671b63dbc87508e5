"""A helper that breaks under a `with` of a user context manager, called from compiled code (GM301)."""
import torch


class Section:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def logged_norm(h):
    with Section():
        print("normalising")  # expect: GM301
        return h / h.norm()


@torch.compile
def f(x):
    y = x * 2
    return logged_norm(y) + 1
