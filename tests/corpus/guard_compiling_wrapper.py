"""A module's own wrapper of torch's query guards eager-only checks: no break. kornia's
`is_compiling` in `kornia/core/utils.py` reads the query through `getattr(...) or getattr(...)`
and is marked `@torch.jit.unused`; another spelling imports it under another name in a `try`."""
import torch

try:
    from torch.compiler import is_compiling as _imported_is_compiling
except ImportError:
    _imported_is_compiling = None

_torch_is_compiling = getattr(torch.compiler, "is_compiling", None) or getattr(torch._dynamo, "is_compiling", None)


@torch.jit.unused
def is_compiling() -> bool:
    """Whether execution is inside torch.compile."""
    return bool(_torch_is_compiling()) if _torch_is_compiling is not None else False


def compiling() -> bool:
    return bool(_imported_is_compiling()) if _imported_is_compiling is not None else False


def in_script() -> bool:
    return torch.jit.is_scripting()


@torch.compile
def f(x):
    if not is_compiling():
        if (x < 0).any():
            raise ValueError("negative input")
    if not compiling() and x.max().item() > 100:
        raise ValueError("too large")
    if in_script():
        print(x.sum().item())
    return x * 2
