"""functools.partial of a torch function is traced: no break."""
import functools

import torch

soft = functools.partial(torch.softmax, dim=-1)


@torch.compile
def f(x):
    temper = functools.partial(torch.div, other=2.0)
    return soft(temper(x))
