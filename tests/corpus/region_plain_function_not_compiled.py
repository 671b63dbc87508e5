"""A plain function that is neither compiled nor called from compiled code may print freely: nothing is flagged."""
import torch


def report(loss):
    print("loss", loss)
    return loss.item()


@torch.compile
def f(x):
    return (x * 2).sum()


def sample():
    return f, (torch.randn(4),), {}
