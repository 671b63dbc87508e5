"""A plain `warnings.warn(...)` in a compiled function, the minified repro of a pytorch issue
(the issue's function only warns; here it also returns a value computed from its input, before
and after the warning, so the graph break splits real work).

Source: https://github.com/pytorch/pytorch/issues/135688 ("torch._dynamo.exc.Unsupported: Graph
break due to unsupported Python builtin _warnings.warn"; the reply points to
`torch._dynamo.config.reorderable_logging_functions`).

Breaks: `warnings.warn("aaa")` (an unsupported Python builtin).

HAND: the warning moves into a `torch.library.custom_op` with an ORDERED effect, called on the
intermediate tensor, which issues the same UserWarning text at run time.
"""
import warnings

import torch

KIND = "warnings"


def fn(x):
    y = x.exp() - 1
    warnings.warn("aaa")
    return y * x.sigmoid()


def make():
    return fn


def inputs():
    g = torch.Generator().manual_seed(4)
    return [
        (torch.randn(3, generator=g),),
        (torch.randn(2, 4, generator=g),),
        (torch.zeros(5),),
        (torch.tensor([float("inf"), -1.0]),),
        (torch.randn(1, generator=g, dtype=torch.float64),),
        (torch.randn(3, 2, 2, generator=g),),
        (torch.tensor(0.5),),
        (torch.linspace(-3, 3, 7),),
    ]
