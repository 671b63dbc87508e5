"""Asteroid PITLossWrapper (pw_mtx mode with pairwise negative SI-SDR): the best permutation of the
sources is picked per utterance, then the estimates are reordered.

Source: https://github.com/asteroid-team/asteroid/blob/master/asteroid/losses/pit_wrapper.py
(`PITLossWrapper.forward`, `find_best_perm`, `reorder_source`) and
https://github.com/asteroid-team/asteroid/blob/master/asteroid/losses/sdr.py (`PairwiseNegSDR`).

Breaks: `torch.stack([perms[m] for m in min_loss_idx], dim=0)` iterates over the argmin tensor and
indexes the permutation table with each 0-d tensor, which reads its value
(`aten._local_scalar_dense`, data-dependent operator).

HAND: gather the permutations with one advanced index, `batch_indices = perms[min_loss_idx]`
(same values, shape and dtype).
"""
from itertools import permutations

import torch
from torch import nn

KIND = "tensor-iteration-index"
GRAD = True


class PairwiseNegSDR(nn.Module):
    def __init__(self, sdr_type="sisdr", zero_mean=True, take_log=True, EPS=1e-8):
        super().__init__()
        assert sdr_type in ["snr", "sisdr", "sdsdr"]
        self.sdr_type = sdr_type
        self.zero_mean = zero_mean
        self.take_log = take_log
        self.EPS = EPS

    def forward(self, est_targets, targets):
        if targets.size() != est_targets.size() or targets.ndim != 3:
            raise TypeError(
                f"Inputs must be of shape [batch, n_src, time], got {targets.size()} and {est_targets.size()} instead"
            )
        assert targets.size() == est_targets.size()
        # Step 1. Zero-mean norm
        if self.zero_mean:
            mean_source = torch.mean(targets, dim=2, keepdim=True)
            mean_estimate = torch.mean(est_targets, dim=2, keepdim=True)
            targets = targets - mean_source
            est_targets = est_targets - mean_estimate
        # Step 2. Pair-wise SI-SDR. (Reshape to use broadcast)
        s_target = torch.unsqueeze(targets, dim=1)
        s_estimate = torch.unsqueeze(est_targets, dim=2)
        if self.sdr_type in ["sisdr", "sdsdr"]:
            pair_wise_dot = torch.sum(s_estimate * s_target, dim=3, keepdim=True)
            s_target_energy = torch.sum(s_target**2, dim=3, keepdim=True) + self.EPS
            pair_wise_proj = pair_wise_dot * s_target / s_target_energy
        else:
            pair_wise_proj = s_target.repeat(1, s_target.shape[2], 1, 1)
        if self.sdr_type in ["sdsdr", "snr"]:
            e_noise = s_estimate - s_target
        else:
            e_noise = s_estimate - pair_wise_proj
        pair_wise_sdr = torch.sum(pair_wise_proj**2, dim=3) / (torch.sum(e_noise**2, dim=3) + self.EPS)
        if self.take_log:
            pair_wise_sdr = 10 * torch.log10(pair_wise_sdr + self.EPS)
        return -pair_wise_sdr


class PITLossWrapper(nn.Module):
    def __init__(self, loss_func, pit_from="pw_mtx", perm_reduce=None):
        super().__init__()
        self.loss_func = loss_func
        self.pit_from = pit_from
        self.perm_reduce = perm_reduce

    def forward(self, est_targets, targets, return_est=False, reduce_kwargs=None, **kwargs):
        n_src = targets.shape[1]
        assert n_src < 10, f"Expected source axis along dim 1, found {n_src}"
        pw_losses = self.loss_func(est_targets, targets, **kwargs)
        assert pw_losses.ndim == 3, (
            "Something went wrong with the loss " "function, please read the docs."
        )
        assert pw_losses.shape[0] == targets.shape[0], "PIT loss needs same batch dim as input"

        reduce_kwargs = reduce_kwargs if reduce_kwargs is not None else dict()
        min_loss, batch_indices = self.find_best_perm(
            pw_losses, perm_reduce=self.perm_reduce, **reduce_kwargs
        )
        mean_loss = torch.mean(min_loss)
        if not return_est:
            return mean_loss
        reordered = self.reorder_source(est_targets, batch_indices)
        return mean_loss, reordered

    @staticmethod
    def find_best_perm(pair_wise_losses, perm_reduce=None, **kwargs):
        n_src = pair_wise_losses.shape[-1]
        # After transposition, dim 1 corresp. to sources and dim 2 to estimates
        pwl = pair_wise_losses.transpose(-1, -2)
        perms = pwl.new_tensor(list(permutations(range(n_src))), dtype=torch.long)
        # Column permutation indices
        idx = torch.unsqueeze(perms, 2)
        # Loss mean of each permutation
        if perm_reduce is None:
            # one-hot, [n_src!, n_src, n_src]
            perms_one_hot = pwl.new_zeros((*perms.size(), n_src)).scatter_(2, idx, 1)
            loss_set = torch.einsum("bij,pij->bp", [pwl, perms_one_hot])
            loss_set /= n_src
        else:
            pwl_set = pwl[:, torch.arange(n_src), idx.squeeze(-1)]
            loss_set = perm_reduce(pwl_set, **kwargs)
        # Indexes and values of min losses for each batch element
        min_loss, min_loss_idx = torch.min(loss_set, dim=1)

        # Permutation indices for each batch.
        batch_indices = perms[min_loss_idx]
        return min_loss, batch_indices

    @staticmethod
    def reorder_source(source, batch_indices):
        reordered_sources = torch.stack(
            [torch.index_select(s, 0, b) for s, b in zip(source, batch_indices)]
        )
        return reordered_sources


def make():
    torch.manual_seed(0)
    return PITLossWrapper(PairwiseNegSDR("sisdr"), pit_from="pw_mtx")


def _pair(b, n, t, seed, swap=True):
    g = torch.Generator().manual_seed(seed)
    targets = torch.randn(b, n, t, generator=g)
    est = targets + 0.3 * torch.randn(b, n, t, generator=g)
    if swap:
        # permute the sources of every other utterance so the best permutation differs per row
        est[::2] = est[::2].flip(1)
    return est.requires_grad_(), targets


def inputs():
    out = []
    for i, (b, n, t, ret, swap) in enumerate([
        (3, 2, 32, True, True), (2, 2, 16, False, True), (4, 3, 24, True, True),
        (2, 3, 24, False, False), (1, 2, 8, True, False), (5, 3, 16, True, True),
        (3, 4, 12, True, True), (2, 2, 40, False, False),
    ]):
        est, tgt = _pair(b, n, t, 100 + i, swap)
        out.append((est, tgt, ret))
    return out


def failing_inputs():
    # targets with no source axis: the pairwise loss rejects them
    return [(torch.randn(2, 16), torch.randn(2, 16), False)]
