"""A print inside a Python-bounded `while` body makes dynamo skip the whole function (GM301, frame-skip)."""
import torch


@torch.compile
def f(x):
    step = 0
    while step < 3:
        x = x * 0.5
        print("step", step)  # expect: GM301
        step += 1
    return x + 1
