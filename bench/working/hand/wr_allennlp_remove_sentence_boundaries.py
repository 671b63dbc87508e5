"""allennlp.nn.util.remove_sentence_boundaries — hand rewrite (vectorised, no NumPy round trip).

Source: https://github.com/allenai/allennlp/blob/main/allennlp/nn/util.py

HAND: `keep = arange(T - 2) < (lengths - 2)[:, None]`; the stripped tensor is
`torch.where(keep[..., None], tensor[:, 1:-1], 0)`.
"""
import torch
from typing import Tuple

KIND = "numpy-loop"
GRAD = True


def remove_sentence_boundaries(tensor: torch.Tensor, mask: torch.BoolTensor) -> Tuple[torch.Tensor, torch.Tensor]:
    sequence_lengths = mask.sum(dim=1)
    new_len = tensor.shape[1] - 2
    new_mask = torch.arange(new_len, device=tensor.device)[None, :] < (sequence_lengths - 2)[:, None]
    tensor_without_boundary_tokens = torch.where(new_mask[..., None], tensor[:, 1:-1, :], tensor.new_zeros(()))
    return tensor_without_boundary_tokens, new_mask


def make():
    return remove_sentence_boundaries


def _mask(lengths, T):
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(3, 7, 4), _mask([7, 5, 3], 7)),
        (torch.randn(2, 6, 3), _mask([6, 6], 6)),
        (torch.randn(3, 5, 2), _mask([2, 5, 1], 5)),
        (torch.randn(1, 4, 5), _mask([4], 4)),
        (torch.randn(4, 8, 3), _mask([8, 4, 2, 6], 8)),
        (torch.randn(2, 3, 2), _mask([3, 2], 3)),
        (torch.randn(2, 5, 4), _mask([0, 5], 5)),
        (torch.randn(3, 9, 1), _mask([9, 9, 3], 9)),
    ]
