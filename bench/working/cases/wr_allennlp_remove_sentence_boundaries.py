"""allennlp.nn.util.remove_sentence_boundaries (strips the <S> / </S> positions from ELMo's
biLM outputs; the inverse of add_sentence_boundary_token_ids).

Source: https://github.com/allenai/allennlp/blob/main/allennlp/nn/util.py
(`remove_sentence_boundaries`, called by allennlp/modules/elmo.py `Elmo.forward`).

Breaks: `mask.sum(dim=1).detach().cpu().numpy()` (NumPy round trip of the lengths), then a Python
loop over the NumPy lengths with `if j > 2` and slices `[: (j - 2)]` whose bounds are the data.

HAND: vectorised: `keep = arange(T - 2) < (lengths - 2)[:, None]` gives the new mask, and
`torch.where(keep[..., None], tensor[:, 1:-1], 0)` the stripped tensor (same values, same
gradients: the copied positions get the upstream gradient, the others none).
"""
import torch
from typing import Tuple

KIND = "numpy-loop"
GRAD = True


def remove_sentence_boundaries(tensor: torch.Tensor, mask: torch.BoolTensor) -> Tuple[torch.Tensor, torch.Tensor]:
    sequence_lengths = mask.sum(dim=1).detach().cpu().numpy()
    tensor_shape = list(tensor.data.shape)
    new_shape = list(tensor_shape)
    new_shape[1] = tensor_shape[1] - 2
    tensor_without_boundary_tokens = tensor.new_zeros(*new_shape)
    new_mask = tensor.new_zeros((new_shape[0], new_shape[1]), dtype=torch.bool)
    for i, j in enumerate(sequence_lengths):
        if j > 2:
            tensor_without_boundary_tokens[i, : (j - 2), :] = tensor[i, 1 : (j - 1), :]
            new_mask[i, : (j - 2)] = True

    return tensor_without_boundary_tokens, new_mask


def make():
    return remove_sentence_boundaries


def _mask(lengths, T):
    return torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]


def inputs():
    torch.manual_seed(0)
    return [
        (torch.randn(3, 7, 4), _mask([7, 5, 3], 7)),
        (torch.randn(2, 6, 3), _mask([6, 6], 6)),          # no padding
        (torch.randn(3, 5, 2), _mask([2, 5, 1], 5)),       # sentences with nothing between <S> and </S>
        (torch.randn(1, 4, 5), _mask([4], 4)),
        (torch.randn(4, 8, 3), _mask([8, 4, 2, 6], 8)),
        (torch.randn(2, 3, 2), _mask([3, 2], 3)),          # one-token sentence
        (torch.randn(2, 5, 4), _mask([0, 5], 5)),          # empty row
        (torch.randn(3, 9, 1), _mask([9, 9, 3], 9)),
    ]
