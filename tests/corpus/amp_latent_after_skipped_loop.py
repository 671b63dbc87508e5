"""Breaks after a break in a loop are latent: dynamo runs the rest of the function eagerly from the
loop's break (here a helper's, called in the loop) and never reaches them; they break once it is
fixed. The print before the loop is a real break."""
import torch


def scale_in_place(values, factor):
    for value in values:
        value.mul_(factor.item())  # expect: GM201


@torch.compile
def search(x, factor):
    y = x * 2
    print("before", y.shape)  # expect: GM301
    for step in range(3):
        scale_in_place([y], factor)
        print("step", step)  # expect: GM301
    if y.sum().item() > 0:  # expect: GM201
        y = y + 1
    return y


def sample():
    return search, (torch.randn(4), torch.tensor(0.5)), {}
