"""Functions whose parameters say they hold tensors only inside a container or union annotation
(`List[Tensor]`: torch's `clip_grad_norm_`; `Union[Tensor, List[Tensor]]`: torchvision's
`make_grid`), or by the factory function written for the class (`x: torch.tensor`, Coqui TTS):
they work on tensors, so nothing compiling them, their breaks are reported if compiled. A
function that takes only numbers (`List[int]`) is not checked."""
from typing import List, Union

import torch
from torch import Tensor


def total_norm(grads: List[Tensor], error_if_nonfinite: bool = False) -> Tensor:
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    if error_if_nonfinite and torch.logical_or(norm.isnan(), norm.isinf()):  # expect if compiled: GM101
        raise RuntimeError("non-finite norm")
    return norm


def normalize(tensor: Union[torch.Tensor, List[torch.Tensor]]) -> torch.Tensor:
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)
    low = float(tensor.min())  # expect if compiled: GM203
    return tensor - low


def lengths_left(x: torch.tensor, x_lengths: torch.tensor, segment_size=4):
    len_diff = x_lengths - segment_size
    if x.size(1) > 2 and len_diff.min() < 0:  # expect if compiled: GM101
        return x[:, :segment_size]
    return x


def total(sizes: List[int]) -> int:
    count = 0
    for size in sizes:
        if size > 0:
            count += size
    return count


@torch.compile
def f(x):  # the file's compiled code: it calls none of the functions above
    return x * 2


def sample():
    return f, (torch.randn(4),), {}


def sample_if_compiled():
    return [
        (total_norm, ([torch.randn(3), torch.randn(2)], True), {}),
        (normalize, ([torch.randn(3), torch.randn(3)],), {}),
        (lengths_left, (torch.randn(2, 6), torch.tensor([3, 5])), {}),
    ]
