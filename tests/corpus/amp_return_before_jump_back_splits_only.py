"""A break in a loop costs the whole function only when dynamo, reading the bytecode on from the
break, meets the loop's jump back before a `return` (torch 2.13 `maybe_has_backedge`). Here the
`if ...: return` after the print returns first: dynamo resumes after the print on every iteration,
and the `.item()` after the loop is a break of its own (not latent). A helper's loop stops only the
helper's frame when the call is not in a loop: the caller goes on being traced."""
import torch


@torch.compile
def returns_first(x, steps):
    y = x * 2
    for i in range(steps):
        y = y * 0.5
        print("value")  # expect: GM301
        if i > 10:
            return y
    return y + y.sum().item()  # expect: GM201


def scale_in_place(values, factor):
    for value in values:
        value.mul_(factor.item())  # expect: GM201


@torch.compile
def calls_a_looping_helper(x, factor):
    y = x * 2
    scale_in_place([y], factor)
    print("after")  # expect: GM301
    return y + y.sum().item()  # expect: GM201


def sample():
    return [
        (returns_first, (torch.ones(4), 3), {}),
        (calls_a_looping_helper, (torch.ones(4), torch.tensor(0.5)), {}),
    ]
