"""The positivity check from a pytorch issue, `test = torch.all(a > 0); print(test)`, followed by the
progress print `print("should not run")`, here guarding a log-space normalisation of the input.

Source: https://github.com/pytorch/pytorch/issues/147282 ("assert fails to trigger inside
torch.compile": the compiled function printed `tensor(False)` and then "should not run").
The issue's `assert test, "should throw"` between the two prints is left out: torch 2.13 traces it
(into an `_assert_async`, no break) and the compiled original then raises `RuntimeError` where eager
raises `AssertionError` (and inductor differs again), so it is no break site and would only measure
that compiler behaviour. Two inputs are not positive
(`tensor(False)` is printed).

Breaks: `print(test)` of a 0-d tensor (needs its run-time value) and `print("should not run")`
(print is not traceable).

HAND: both prints become `torch.library.custom_op`s with an ORDERED effect, called on `test`, which
print the same tensor and the same line at run time, in the same order.
"""
import torch

KIND = "print"


def func(a):
    test = torch.all(a > 0)
    print(test)
    print("should not run")
    return torch.log(a) - torch.log(a.sum(-1, keepdim=True))


def make():
    return func


def inputs():
    torch.manual_seed(0)
    return [
        (torch.tensor([1.0, 2.0]),),
        (torch.rand(3) + 0.1,),
        (torch.rand(2, 4) + 1e-3,),
        (torch.tensor([1e-30, 1.0]),),
        (torch.full((5,), 3.0),),
        (torch.rand(1, 1) + 0.5,),
        (torch.tensor([float("inf"), 1.0]),),
        (torch.rand(4, 3, dtype=torch.float64) + 0.2,),
        (torch.tensor([0.0, 1.0]),),                 # prints tensor(False)
        (torch.tensor([[2.0, -1.0], [1.0, 1.0]]),),  # prints tensor(False)
    ]

