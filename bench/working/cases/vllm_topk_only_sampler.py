"""vLLM v1's native top-k / top-p sampler: top-k alone avoids sorting the vocabulary by taking
`logits.topk(k.max())` and gathering each row's k-th value as the threshold; with top-p the logits
are sorted; then the exponential-race ("Gumbel") sampling, with per-request generators for seeded
requests.

Source: https://github.com/vllm-project/vllm/blob/main/vllm/v1/sample/ops/topk_topp_sampler.py
(`TopKTopPSampler.forward_native`, `apply_top_k_top_p`, `apply_top_k_only`, `random_sample`).

Breaks: `logits.topk(max_top_k, dim=1)` where `max_top_k = k.max()` is a 0-d tensor (the number of
outputs of `topk` is data-dependent); `q[i].exponential_(generator=generator)` for seeded requests
(`torch.Generator` argument).

HAND: partial -- the top-k threshold is gathered from `logits.topk(logits.shape[1])` (a full
descending sort; the k-th largest value is the same element), which removes the data-dependent
size (the in-place mask is written as an index_put, the same update, to dodge an inductor bug); the
per-request generators stay (the caller's generator state must advance).
"""
from typing import Optional

import torch
import torch.nn as nn


def apply_top_k_top_p(
    logits: torch.Tensor,
    k: Optional[torch.Tensor],
    p: Optional[torch.Tensor],
) -> torch.Tensor:
    """Apply top-k and top-p masks to the logits.

    If a top-p is used, this function will sort the logits tensor,
    which can be slow for large batches.

    The logits tensor may be updated in-place.
    """
    if p is None:
        if k is None:
            return logits

        # Avoid sorting vocab for top-k only case.
        return apply_top_k_only(logits, k)

    logits_sort, logits_idx = logits.sort(dim=-1, descending=False)

    if k is not None:
        # Apply top-k.
        top_k_mask = logits_sort.size(1) - k.to(torch.long)  # shape: B
        # Get all the top_k values.
        top_k_mask = logits_sort.gather(1, top_k_mask.unsqueeze(dim=1))
        top_k_mask = logits_sort < top_k_mask
        logits_sort.masked_fill_(top_k_mask, -float("inf"))

    if p is not None:
        # Apply top-p.
        probs_sort = logits_sort.softmax(dim=-1)
        probs_sum = torch.cumsum(probs_sort, dim=-1, out=probs_sort)
        top_p_mask = probs_sum <= 1 - p.unsqueeze(dim=1)
        # at least one
        top_p_mask[:, -1] = False
        logits_sort.masked_fill_(top_p_mask, -float("inf"))

    # Re-sort the probabilities.
    logits = logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)
    return logits


def apply_top_k_only(
    logits: torch.Tensor,
    k: torch.Tensor,
) -> torch.Tensor:
    """
    Apply top-k mask to the logits.

    This implementation doesn't involve sorting the entire vocab.

    The logits tensor may be updated in-place.
    """
    no_top_k_mask = k == logits.shape[1]
    # Set non-top-k rows to 1 so that we can gather.
    k = k.masked_fill(no_top_k_mask, 1)
    max_top_k = k.max()
    # topk.values tensor has shape [batch_size, max_top_k].
    # Convert top k to 0-based index in range [0, max_top_k).
    k_index = k.sub_(1).unsqueeze(1)
    top_k_mask = logits.topk(max_top_k, dim=1).values.gather(1, k_index.long())
    # Handle non-topk rows.
    top_k_mask.masked_fill_(no_top_k_mask.unsqueeze(1), -float("inf"))
    logits.masked_fill_(logits < top_k_mask, -float("inf"))
    return logits


def random_sample(
    probs: torch.Tensor,
    generators: dict[int, torch.Generator],
) -> torch.Tensor:
    """Randomly sample from the probabilities.

    We use this function instead of torch.multinomial because torch.multinomial
    causes CPU-GPU synchronization.
    """
    q = torch.empty_like(probs)
    # NOTE(woosuk): To batch-process the requests without their own seeds,
    # which is the common case, we first assume that every request does
    # not have its own seed. Then, we overwrite the values for the requests
    # that have their own seeds.
    if len(generators) != probs.shape[0]:
        q.exponential_()
    if generators:
        # TODO(woosuk): This can be slow because we handle each request
        # one by one. Optimize this.
        for i, generator in generators.items():
            q[i].exponential_(generator=generator)
    return probs.div_(q).argmax(dim=-1).view(-1)


class TopKTopPSampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.apply_top_k_top_p = apply_top_k_top_p

    def forward(
        self,
        logits: torch.Tensor,
        generators: dict[int, torch.Generator],
        k: Optional[torch.Tensor],
        p: Optional[torch.Tensor],
    ) -> torch.Tensor:
        """
        PyTorch-native implementation of top-k and top-p sampling.

        The logits tensor may be updated in-place.
        """
        logits = self.apply_top_k_top_p(logits, k, p)
        probs = logits.softmax(dim=-1, dtype=torch.float32)
        return random_sample(probs, generators)


def make():
    return TopKTopPSampler()


def inputs():
    g = torch.Generator().manual_seed(13)
    B, V = 4, 16
    calls = []
    for n, (k, p, seeded) in enumerate([
        ([3, 5, 16, 1], None, False),
        ([16, 16, 16, 16], None, False),     # no row restricted
        ([2, 2, 2, 2], None, False),
        (None, [0.9, 0.5, 1.0, 0.7], False),
        ([4, 16, 8, 3], [0.8, 0.95, 0.6, 1.0], False),
        (None, None, False),
        ([7, 1, 16, 12], None, True),        # two requests with their own seed
        ([5, 5, 9, 16], None, False),
        ([6, 16, 3, 2], None, False),
    ]):
        logits = torch.randn(B, V, generator=g) * 3
        kt = None if k is None else torch.tensor(k)
        pt = None if p is None else torch.tensor(p)
        gens = {1: torch.Generator().manual_seed(100 + n), 3: torch.Generator().manual_seed(200 + n)} if seeded else {}
        calls.append((logits, gens, kt, pt))
    return calls


KIND = "dynamic-shape+generator"
