"""A plain function that is neither compiled nor called from compiled code may print freely: its
findings are breaks only if it is compiled (information, no fix), none counts as a break of `f`."""
import torch


def report(loss):
    print("loss", loss)  # expect if compiled: GM301
    return loss.item()  # expect if compiled: GM201


@torch.compile
def f(x):
    return (x * 2).sum()


def sample():
    return f, (torch.randn(4),), {}


def sample_if_compiled():
    return report, (torch.randn(4),), {}
