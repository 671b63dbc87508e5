"""An `if TYPE_CHECKING:` block is never executed, so nothing in it breaks."""
from typing import TYPE_CHECKING

import torch


@torch.compile
def f(x):
    if TYPE_CHECKING:
        reveal_type(x)  # noqa: F821
        print(x)
    return x.exp()
