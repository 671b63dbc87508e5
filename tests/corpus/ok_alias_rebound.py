"""A local bound to a function and then to another before the call runs only the last one
(`fn = breaks; fn = smooth`), and a local rebound through `nonlocal` is not followed: the branch
in `breaks` never runs under compile, no break. Nothing compiles `breaks` itself: its branch is a
break only if it is compiled."""
import torch


def breaks(x):
    if x.sum() > 0:  # expect if compiled: GM101
        return x * 2
    return x


def smooth(x):
    return torch.tanh(x)


@torch.compile
def f(x):
    fn = breaks
    fn = smooth
    return fn(x)


@torch.compile
def g(x):
    fn = breaks

    def pick():
        nonlocal fn
        fn = smooth

    pick()
    return fn(x)


def sample():
    return [(f, (torch.randn(3),), {}), (g, (torch.randn(3),), {})]


def sample_if_compiled():
    return [(breaks, (torch.ones(3),), {})]
