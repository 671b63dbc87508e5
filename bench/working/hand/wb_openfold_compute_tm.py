"""Hand rewrite of cases/wb_openfold_compute_tm.py: the first maximal entry is found with `argmax`
on the flattened scores and read with `gather`."""

from typing import Optional

import torch

KIND = "dynamic-shape"


def _calculate_bin_centers(boundaries: torch.Tensor):
    step = boundaries[1] - boundaries[0]
    bin_centers = boundaries + step / 2
    bin_centers = torch.cat([bin_centers, (bin_centers[-1] + step).unsqueeze(-1)], dim=0)
    return bin_centers


def compute_tm(
    logits: torch.Tensor,
    residue_weights: Optional[torch.Tensor] = None,
    asym_id: Optional[torch.Tensor] = None,
    interface: bool = False,
    max_bin: int = 31,
    no_bins: int = 64,
    eps: float = 1e-8,
    **kwargs,
) -> torch.Tensor:
    if residue_weights is None:
        residue_weights = logits.new_ones(logits.shape[-2])

    boundaries = torch.linspace(0, max_bin, steps=(no_bins - 1), device=logits.device)

    bin_centers = _calculate_bin_centers(boundaries)
    clipped_n = max(torch.sum(residue_weights), 19)

    d0 = 1.24 * (clipped_n - 15) ** (1.0 / 3) - 1.8

    probs = torch.nn.functional.softmax(logits, dim=-1)

    tm_per_bin = 1.0 / (1 + (bin_centers ** 2) / (d0 ** 2))
    predicted_tm_term = torch.sum(probs * tm_per_bin, dim=-1)

    n = residue_weights.shape[-1]
    pair_mask = residue_weights.new_ones((n, n), dtype=torch.int32)
    if interface and (asym_id is not None):
        if len(asym_id.shape) > 1:
            assert len(asym_id.shape) <= 2
            batch_size = asym_id.shape[0]
            pair_mask = residue_weights.new_ones((batch_size, n, n), dtype=torch.int32)
        pair_mask *= (asym_id[..., None] != asym_id[..., None, :]).to(dtype=pair_mask.dtype)

    predicted_tm_term *= pair_mask

    pair_residue_weights = pair_mask * (residue_weights[..., None, :] * residue_weights[..., :, None])
    denom = eps + torch.sum(pair_residue_weights, dim=-1, keepdims=True)
    normed_residue_mask = pair_residue_weights / denom
    per_alignment = torch.sum(predicted_tm_term * normed_residue_mask, dim=-1)

    weighted = per_alignment * residue_weights

    # the first entry (row-major) equal to the maximum is the flat argmax (argmax returns the first
    # maximal index); per_alignment has the shape of weighted
    argmax = weighted.reshape(-1).argmax().reshape(1)
    return per_alignment.reshape(-1).gather(0, argmax).reshape(())


def make():
    return compute_tm


def inputs():
    g = torch.Generator().manual_seed(5)
    logits = lambda *shape: torch.randn(*shape, 64, generator=g) * 2
    chains = lambda n, cut: (torch.arange(n) >= cut).long()
    w_short = torch.ones(24)
    w_short[12:] = 0  # 12 resolved residues: n clipped to 19
    return [
        (logits(24, 24),),                                        # pTM, n = 24 > 19
        (logits(10, 10),),                                        # n = 10: clipped to 19
        (logits(19, 19),),                                        # n == 19 exactly
        (logits(24, 24), w_short),                                # masked residues
        (logits(24, 24), torch.zeros(24)),                        # no resolved residue: all ties at 0
        (logits(20, 20), None, chains(20, 8), True),              # ipTM, two chains
        (logits(20, 20), None, chains(20, 20), True),             # ipTM with a single chain: pair mask all 0
        (logits(2, 20, 20), None, torch.stack([chains(20, 5), chains(20, 15)]), True),  # batched asym_id
        (logits(16, 16).double(), torch.rand(16, generator=g, dtype=torch.float64) * 2),  # fractional weights, n < 19
        (logits(22, 22), None, chains(22, 11), False),            # asym_id given but interface off
    ]
