"""torchaudio.functional.merge_tokens: frame-level alignment -> list of TokenSpan via
``torch.nonzero(diff != 0).squeeze().tolist()`` and per-span ``.item()`` scores.

``TokenSpan`` and ``merge_tokens`` kept as in the source (1-D checks, ``torch.diff`` with -1
prepended/appended, change points by ``nonzero``, the list comprehension with the walrus
``(token := tokens[start]) != blank`` and ``scores[start:end].mean().item()``). The CTC forced
alignment (a C++ op) is reduced to the frame-wise argmax path of the emissions with its
probabilities, as in torchaudio's forced-alignment tutorial when the transcript is unknown.

Source: https://github.com/pytorch/audio/blob/main/src/torchaudio/functional/_alignment.py (TokenSpan, merge_tokens)
        https://pytorch.org/audio/stable/tutorials/ctc_forced_alignment_api_tutorial.html

Breaks: ``torch.nonzero(...)`` (dynamic shape) followed by ``.tolist()``, ``tokens.tolist()`` and the
``.item()`` per span.

HAND: none — the result is a Python list of dataclasses holding Python ints and floats whose
length depends on the tensor values.
"""
from dataclasses import dataclass
from typing import List

import torch
from torch import Tensor


@dataclass
class TokenSpan:
    token: int
    """The token"""
    start: int
    """The start time (inclusive) in emission time axis."""
    end: int
    """The end time (exclusive) in emission time axis."""
    score: float
    """The score of the this token."""

    def __len__(self) -> int:
        """Returns the time span"""
        return self.end - self.start


def merge_tokens(tokens: Tensor, scores: Tensor, blank: int = 0) -> List[TokenSpan]:
    if tokens.ndim != 1 or scores.ndim != 1:
        raise ValueError("`tokens` and `scores` must be 1D Tensor.")
    if len(tokens) != len(scores):
        raise ValueError("`tokens` and `scores` must be the same length.")

    diff = torch.diff(
        tokens, prepend=torch.tensor([-1], device=tokens.device), append=torch.tensor([-1], device=tokens.device)
    )
    changes_wo_blank = torch.nonzero((diff != 0)).squeeze().tolist()
    tokens = tokens.tolist()
    spans = [
        TokenSpan(token=token, start=start, end=end, score=scores[start:end].mean().item())
        for start, end in zip(changes_wo_blank[:-1], changes_wo_blank[1:])
        if (token := tokens[start]) != blank
    ]
    return spans


def frame_token_spans(emission: Tensor, blank: int = 0):
    probs = emission.log_softmax(-1).exp()
    scores, tokens = probs.max(-1)
    return merge_tokens(tokens, scores, blank)


def make():
    return frame_token_spans


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for t, c in [(12, 5), (8, 3), (20, 6), (5, 4), (16, 2), (10, 8), (7, 5)]:
        out.append((torch.randn(t, c, generator=g) * 2,))
    blank_heavy = torch.randn(9, 4, generator=g)
    blank_heavy[:, 0] += 10.0      # every frame is blank: no span
    out.append((blank_heavy,))
    runs = torch.full((10, 4), -5.0)
    for i, tok in enumerate([1, 1, 1, 0, 2, 2, 0, 0, 3, 1]):
        runs[i, tok] = 5.0
    out.append((runs,))
    return out


KIND = "tolist-nonzero"
