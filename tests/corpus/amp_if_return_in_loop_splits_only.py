"""A tensor test whose branch returns, inside a loop: torch 2.13 resumes after the break instead of
running the whole function eagerly (GM101 and GM201, effect "break"); the break in the other
loop's test, whose branch does not return, still costs the whole function."""
import torch


@torch.compile
def f(x):
    for w in [0.5, 0.25, 0.1]:
        x = x * w
        if x.sum() < 0.1:  # expect: GM101
            x = x + 1
            return x
    return x


@torch.compile
def g(x):
    for _ in range(3):
        for _ in range(2):
            x = x * 0.5
            if x.sum().item() < 0.1:  # expect: GM201
                return x
    return x


@torch.compile
def h(x):
    for _ in range(3):
        x = x * 0.5
        if x.sum() > 0.1:  # expect: GM101
            x = x + 1
        else:
            return x
    return x


def sample():
    return [(f, (torch.ones(4),), {}), (g, (torch.ones(4),), {}), (h, (torch.ones(4),), {})]
