"""torchaudio's CTC forced alignment entry point: validate the targets against the emission (no
blank token among them, every id inside the vocabulary), fill default lengths, then run the
Viterbi alignment; used after a wav2vec2-style acoustic model as in the forced-alignment tutorial.

Source: https://github.com/pytorch/audio/blob/main/src/torchaudio/functional/_alignment.py
        (forced_align) and the tutorial
        https://pytorch.org/audio/stable/tutorials/ctc_forced_alignment_api_tutorial.html (align()).
Reduced: the C++ kernel `torch.ops.torchaudio.forced_align` (batch size 1) is replaced by a small
torch Viterbi over the CTC lattice (tensor ops only); the acoustic model is one linear layer.

Breaks: `if blank in targets:` (Tensor.__contains__, a branch on tensor values) and
`if torch.max(targets) >= log_probs.shape[-1]:` (branch on a tensor value), each guarding a
`raise ValueError`.

HAND: both checks move into a `torch.library.custom_op` with an ORDERED effect that raises the same
ValueErrors (same text, including the targets' repr) at run time, in the same order.
"""
from typing import Optional, Tuple

import torch
from torch import Tensor, nn


def _ctc_viterbi(log_probs: Tensor, targets: Tensor, blank: int) -> Tuple[Tensor, Tensor]:
    """Stand-in for torch.ops.torchaudio.forced_align (batch size 1): best CTC path by Viterbi."""
    lp = log_probs[0]                    # (T, C)
    tgt = targets[0].long()              # (L,)
    T = lp.shape[0]
    L = tgt.shape[0]
    S = 2 * L + 1
    ext = torch.full((S,), blank, dtype=torch.long, device=lp.device)
    ext[1::2] = tgt
    # a skip from s-2 is allowed onto a label that differs from the label two states back
    prev2 = torch.cat([torch.full((2,), blank, dtype=torch.long, device=lp.device), ext[:-2]])
    allow_skip = (ext != blank) & (ext != prev2)
    allow_skip[:2] = False
    neg_inf = torch.tensor(float("-inf"), dtype=lp.dtype, device=lp.device)

    alpha = torch.full((S,), float("-inf"), dtype=lp.dtype, device=lp.device)
    alpha[0] = lp[0, blank]
    if S > 1:
        alpha[1] = lp[0].index_select(0, ext[1:2])[0]
    backptr = []
    idx = torch.arange(S, device=lp.device)
    for t in range(1, T):
        stay = alpha
        step = torch.cat([neg_inf.view(1), alpha[:-1]])
        skip = torch.where(allow_skip, torch.cat([neg_inf.expand(2), alpha[:-2]]), neg_inf)
        cand = torch.stack([stay, step, skip])          # (3, S)
        best, arg = cand.max(dim=0)
        backptr.append(idx - arg)
        alpha = best + lp[t].index_select(0, ext)
    # end in the last label or the trailing blank
    last = alpha[S - 2:] if S > 1 else alpha
    s = last.argmax() + (S - 2 if S > 1 else 0)
    states = [s]
    for t in range(T - 1, 0, -1):
        s = backptr[t - 1].gather(0, s.view(1))[0]
        states.append(s)
    states = torch.stack(states[::-1])                   # (T,)
    path = ext.gather(0, states)
    scores = lp.gather(1, path.view(-1, 1)).view(-1)
    return path.view(1, -1).to(targets.dtype), scores.view(1, -1)


def _get_check_op():
    # The module is imported more than once in a process: register the op only once.
    try:
        return torch.ops.blind_d_torchaudio.check_targets.default
    except (AttributeError, RuntimeError):
        pass
    from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

    @torch.library.custom_op("blind_d_torchaudio::check_targets", mutates_args=())
    def check_targets(targets: Tensor, blank: int, num_classes: int) -> None:
        if blank in targets:
            raise ValueError(f"targets Tensor shouldn't contain blank index. Found {targets}.")
        if torch.max(targets) >= num_classes:
            raise ValueError("targets values must be less than the CTC dimension")

    @check_targets.register_fake
    def _(targets, blank, num_classes):
        return None

    _register_effectful_op(torch.ops.blind_d_torchaudio.check_targets.default, _EffectType.ORDERED)
    return torch.ops.blind_d_torchaudio.check_targets.default


_check_targets = _get_check_op()


def forced_align(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
    blank: int = 0,
) -> Tuple[Tensor, Tensor]:
    r"""Align a CTC label sequence to an emission."""
    _check_targets(targets, blank, log_probs.shape[-1])

    if input_lengths is None:
        batch_size, length = log_probs.size(0), log_probs.size(1)
        input_lengths = torch.full((batch_size,), length, dtype=torch.int64, device=log_probs.device)
    if target_lengths is None:
        batch_size, length = targets.size(0), targets.size(1)
        target_lengths = torch.full((batch_size,), length, dtype=torch.int64, device=targets.device)

    # For TorchScript compatibility
    assert input_lengths is not None
    assert target_lengths is not None

    paths, scores = _ctc_viterbi(log_probs, targets, blank)
    return paths, scores


class Aligner(nn.Module):
    def __init__(self, feat_dim=6, num_tokens=7, blank=0):
        super().__init__()
        self.acoustic = nn.Linear(feat_dim, num_tokens)
        self.blank = blank

    def forward(self, feats, targets):
        emission = torch.log_softmax(self.acoustic(feats) * 3.0, dim=-1)   # (1, T, C)
        alignments, scores = forced_align(emission, targets, blank=self.blank)
        alignments, scores = alignments[0], scores[0]  # remove batch dimension for simplicity
        scores = scores.exp()  # convert back to probability
        return alignments, scores


def make():
    torch.manual_seed(0)
    return Aligner()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for T, toks in [(8, [1, 2, 3]), (6, [4]), (10, [2, 2, 5]), (9, [6, 1, 6, 1]),
                    (5, [3, 3]), (12, [1, 2, 3, 4, 5]), (7, [5, 6]), (4, [2])]:
        feats = torch.randn(1, T, 6, generator=g)
        out.append((feats, torch.tensor([toks], dtype=torch.int32)))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(1, 6, 6, generator=g)
    return [(feats, torch.tensor([[1, 0, 2]], dtype=torch.int32)),    # contains the blank
            (feats, torch.tensor([[1, 7, 2]], dtype=torch.int32))]    # id outside the vocabulary


KIND = "branch-raise"
