"""SpeechBrain's permutation-invariant SI-SNR loss (`get_si_snr_with_pitwrapper`, the training loss
of its SepFormer / Conv-TasNet / DPRNN speech-separation recipes): for each mixture, `PitWrapper`
computes the SI-SNR of every (estimate, source) pair with `cal_si_snr` and keeps the best
permutation in a Python loop over `itertools.permutations` (`if loss is None or loss > c_loss:`);
`cal_si_snr` first builds a padding mask with `get_mask`, which zeroes `mask[source_lengths[i]:, i]`
for each source.

Source: https://github.com/speechbrain/speechbrain/blob/1b4509a204d0b61d20728de1999ff770f4b88f58/speechbrain/nnet/losses.py
(`PitWrapper._fast_pit`, `_opt_perm_loss`, `forward`; `get_si_snr_with_pitwrapper`, `cal_si_snr`,
`get_mask`), used as `loss: !name:speechbrain.nnet.losses.get_si_snr_with_pitwrapper` in
https://github.com/speechbrain/speechbrain/blob/623bbc291b418e2e379dab9a7f41e5faeaa42ba1/recipes/WSJ0Mix/separation/hparams/sepformer.yaml
(the recipe's `compute_objective` in recipes/WSJ0Mix/separation/train.py calls `self.hparams.loss`).
`reorder_tensor` left out (the loss does not use it). Tiny shapes: batch 1-3, 8-24 samples,
2-3 sources.

Breaks: `mask[source_lengths[i] :, i] = 0` (a slice bounded by a tensor element: `.item()`), once per
source, and `if loss is None or loss > c_loss:` (data-dependent branch), once per permutation after
the first, for every mixture in the batch.

HAND: `get_mask` builds the same mask with `arange(T)[:, None] < source_lengths` (cast to the
source's dtype), and `_fast_pit` stacks the losses of all permutations and takes
`torch.min(..., dim=0)` (the first minimal permutation, as the strict `>` keeps, so the value and
the gradient are the same); the optimal permutation comes back as its index in
`permutations(range(C))` (a 0-d tensor) instead of a tuple, which `get_si_snr_with_pitwrapper`
discards.
"""
from itertools import permutations

import torch
import torch.nn as nn

KIND = "slice+branch-loop"
GRAD = True


class PitWrapper(nn.Module):
    """
    Permutation Invariant Wrapper to allow Permutation Invariant Training
    (PIT) with existing losses.
    """

    def __init__(self, base_loss):
        super().__init__()
        self.base_loss = base_loss

    def _fast_pit(self, loss_mat):
        loss = None
        assigned_perm = None
        for p in permutations(range(loss_mat.shape[0])):
            c_loss = loss_mat[range(loss_mat.shape[0]), p].mean()
            if loss is None or loss > c_loss:
                loss = c_loss
                assigned_perm = p
        return loss, assigned_perm

    def _opt_perm_loss(self, pred, target):
        n_sources = pred.size(-1)

        pred = pred.unsqueeze(-2).repeat(
            *[1 for x in range(len(pred.shape) - 1)], n_sources, 1
        )
        target = target.unsqueeze(-1).repeat(
            1, *[1 for x in range(len(target.shape) - 1)], n_sources
        )

        loss_mat = self.base_loss(pred, target)
        assert len(loss_mat.shape) >= 2, (
            "Base loss should not perform any reduction operation"
        )
        mean_over = [x for x in range(len(loss_mat.shape))]
        loss_mat = loss_mat.mean(dim=mean_over[:-2])

        return self._fast_pit(loss_mat)

    def forward(self, preds, targets):
        losses = []
        perms = []
        for pred, label in zip(preds, targets):
            loss, p = self._opt_perm_loss(pred, label)
            perms.append(p)
            losses.append(loss)
        loss = torch.stack(losses)
        return loss, perms


def get_si_snr_with_pitwrapper(source, estimate_source):
    """This function wraps si_snr calculation with the speechbrain pit-wrapper."""

    pit_si_snr = PitWrapper(cal_si_snr)
    loss, perms = pit_si_snr(source, estimate_source)

    return loss


def cal_si_snr(source, estimate_source):
    """Calculate SI-SNR."""
    EPS = 1e-8
    assert source.size() == estimate_source.size()
    device = estimate_source.device.type

    source_lengths = torch.tensor(
        [estimate_source.shape[0]] * estimate_source.shape[-2], device=device
    )
    mask = get_mask(source, source_lengths)
    estimate_source *= mask

    num_samples = (
        source_lengths.contiguous().reshape(1, -1, 1).float()
    )  # [1, B, 1]
    mean_target = torch.sum(source, dim=0, keepdim=True) / num_samples
    mean_estimate = (
        torch.sum(estimate_source, dim=0, keepdim=True) / num_samples
    )
    zero_mean_target = source - mean_target
    zero_mean_estimate = estimate_source - mean_estimate
    # mask padding position along T
    zero_mean_target *= mask
    zero_mean_estimate *= mask

    # Step 2. SI-SNR with PIT
    # reshape to use broadcast
    s_target = zero_mean_target  # [T, B, C]
    s_estimate = zero_mean_estimate  # [T, B, C]
    # s_target = <s', s>s / ||s||^2
    dot = torch.sum(s_estimate * s_target, dim=0, keepdim=True)  # [1, B, C]
    s_target_energy = (
        torch.sum(s_target**2, dim=0, keepdim=True) + EPS
    )  # [1, B, C]
    proj = dot * s_target / s_target_energy  # [T, B, C]
    # e_noise = s' - s_target
    e_noise = s_estimate - proj  # [T, B, C]
    # SI-SNR = 10 * log_10(||s_target||^2 / ||e_noise||^2)
    si_snr_beforelog = torch.sum(proj**2, dim=0) / (
        torch.sum(e_noise**2, dim=0) + EPS
    )
    si_snr = 10 * torch.log10(si_snr_beforelog + EPS)  # [B, C]

    return -si_snr.unsqueeze(0)


def get_mask(source, source_lengths):
    """
    source: [T, B, C], source_lengths: [B]; returns mask: [T, B, 1]
    """
    mask = source.new_ones(source.size()[:-1]).unsqueeze(-1).transpose(1, -2)
    B = source.size(-2)
    for i in range(B):
        mask[source_lengths[i] :, i] = 0
    return mask.transpose(-2, 1)


def make():
    return get_si_snr_with_pitwrapper


def _case(g, b, t, c, perm=None, noise=0.3):
    """targets [B, T, C]; predictions: the targets with their sources reordered by `perm` (one per
    mixture; None: a random order) plus noise."""
    targets = torch.randn(b, t, c, generator=g)
    preds = []
    for i in range(b):
        p = perm[i] if perm is not None else torch.randperm(c, generator=g).tolist()
        preds.append(targets[i][:, p] + noise * torch.randn(t, c, generator=g))
    return (targets, torch.stack(preds))


def inputs():
    g = torch.Generator().manual_seed(9)
    return [
        _case(g, 2, 16, 2, perm=[[0, 1], [1, 0]]),        # identity and swapped
        _case(g, 1, 8, 2, perm=[[1, 0]]),
        _case(g, 3, 12, 3),                               # three sources: six permutations
        _case(g, 2, 24, 3, perm=[[2, 0, 1], [0, 1, 2]]),
        _case(g, 1, 16, 3, perm=[[1, 2, 0]], noise=1.5),  # noisy: a less obvious best permutation
        _case(g, 2, 10, 2, noise=0.0),                    # exact reordering
        _case(g, 3, 8, 2, noise=2.0),
        _case(g, 1, 20, 3, perm=[[2, 1, 0]], noise=0.05),
    ]
