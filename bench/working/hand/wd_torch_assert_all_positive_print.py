"""Hand rewrite of cases/wd_torch_assert_all_positive_print.py: the two prints run inside
`torch.library.custom_op`s with an ORDERED effect (same text, same order)."""
import torch
from torch._library.effects import EffectType

KIND = "print"


def _print_eager(test):
    print(test)


def _print_line_eager(test):
    print("should not run")


_NS = "wd_torch_assert"
for _name, _fn in (("print_test", _print_eager), ("print_line", _print_line_eager)):
    if not hasattr(getattr(torch.ops, _NS), _name):
        _op = torch.library.custom_op(f"{_NS}::{_name}", _fn, mutates_args=(), schema="(Tensor test) -> ()")
        _op.register_fake(lambda test: None)
        _op.register_effect(EffectType.ORDERED)


def func(a):
    test = torch.all(a > 0)
    torch.ops.wd_torch_assert.print_test(test)
    torch.ops.wd_torch_assert.print_line(test)
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

