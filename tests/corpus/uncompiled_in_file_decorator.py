"""A function under a decorator of its own file that returns a wrapper calling it (kornia's
`@perform_keep_shape_image` on `equalize`): calling the decorated name runs the function, where
its callers are, so nothing compiling it, its helpers' breaks are reported if compiled. A function
under a decorator that only registers it (returns it unchanged, for something else to call) is
left out, as one under a framework's decorator is."""
from functools import wraps

import torch

HANDLERS = {}


def keep_shape(f):
    @wraps(f)
    def _wrapper(input, *args, **kwargs):
        shape = input.shape
        output = f(input.reshape(-1, shape[-1]), *args, **kwargs)
        return output.reshape(shape)

    return _wrapper


def register(f):
    HANDLERS[f.__name__] = f
    return f


def _scale_row(row):
    low = row.min()
    if low.item() < 0.0:  # expect if compiled: GM201
        raise ValueError("negative values")
    return row / row.max()


@keep_shape
def equalize(input):
    return torch.stack([_scale_row(input[i, :]) for i in range(input.shape[0])])


def _clip_row(row):
    return row.clamp(max=row.max().item())


@register
def clipped(input):
    return torch.stack([_clip_row(input[i, :]) for i in range(input.shape[0])])


@torch.compile
def f(x):  # the file's compiled code: it calls none of the functions above
    return x * 2


def sample():
    return f, (torch.randn(4),), {}


def sample_if_compiled():
    return equalize, (torch.rand(2, 3, 4),), {}
