"""OpenFold's predicted TM-score (pTM / ipTM) from the PAE head's logits: the TM-score d0 uses the
number of residues clipped from below with Python's `max(torch.sum(residue_weights), 19)`, and the
score of the best-aligned residue is picked with `(weighted == torch.max(weighted)).nonzero()[0]`.
Computed for every prediction (model ranking in `run_pretrained_openfold.py`).

Source: https://github.com/aqlaboratory/openfold/blob/main/openfold/utils/loss.py
(`compute_tm`, `_calculate_bin_centers`); the same function is vendored in
https://github.com/huggingface/transformers/blob/main/src/transformers/models/esm/openfold_utils/loss.py
(ESMFold) without the multimer branch.

Breaks: `(weighted == torch.max(weighted)).nonzero()` (dynamic shape) and
`per_alignment[tuple(argmax)]` (indexing with data-dependent values). (`max(torch.sum(...), 19)`
does not break on torch 2.13: dynamo traces Python's `max` of a tensor and an int.)

HAND: the first maximal entry in row-major order is `weighted.reshape(-1).argmax()` (argmax returns
the first maximal index), read with `gather` from `per_alignment.reshape(-1)`.
"""

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

    argmax = (weighted == torch.max(weighted)).nonzero()[0]
    return per_alignment[tuple(argmax)]


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
