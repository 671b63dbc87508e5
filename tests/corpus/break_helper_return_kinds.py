"""Calls whose result kind comes from the callee's own `return`, with no annotation: a method of a
module-level instance (`BOUNDS.contains(x)` returns `(...).all()`, a 0-d bool tensor), so `if not`
on it branches on a tensor; a nested function handed a mask at its call site (`pick(x, x > 0)`
indexes with it). A helper returning a Python number, for contrast: no break."""
import torch


class Bounds:
    def __init__(self, low, high):
        self.low = low
        self.high = high

    def contains(self, x):
        inside = (x >= self.low) & (x <= self.high)
        return inside.all()

    def width(self):
        return self.high - self.low


BOUNDS = Bounds(-1.0, 1.0)


def sample():
    return [(f, (torch.randn(8) * 2,), {}), (f, (torch.rand(8) * 0.5,), {})]


@torch.compile
def f(x):
    if not BOUNDS.contains(x):  # expect: GM101
        x = x.clamp(-1, 1)

    def pick(v, m):
        return v[m].sum()  # expect: GM402

    return x * BOUNDS.width() + pick(x, x > 0)
