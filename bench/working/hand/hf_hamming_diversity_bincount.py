"""Hugging Face's diverse (group) beam search penalty: for each beam group after the first, the scores
of its beams are lowered by `diversity_penalty` times how often each token was already chosen by the
previous groups at this step, counted with `torch.bincount(..., minlength=vocab_size)`.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/generation/logits_process.py
(`HammingDiversityLogitsProcessor.__init__`, `__call__`).

Breaks: `torch.bincount(previous_group_tokens, minlength=vocab_size)` -- a dynamic-shape operator
(its length is max(max token + 1, minlength)), once per batch row in a Python loop.

HAND: `torch.zeros(vocab_size, dtype=torch.long).scatter_add_(0, previous_group_tokens,
torch.ones_like(previous_group_tokens))` -- the same int64 counts for token ids below the vocabulary
size (the processor's domain: ids come from `scores.shape[-1]`).
"""
import torch


class HammingDiversityLogitsProcessor:
    def __init__(self, diversity_penalty: float, num_beams: int, num_beam_groups: int):
        if not isinstance(diversity_penalty, float) or (not diversity_penalty > 0.0):
            raise ValueError("`diversity_penalty` should be a float strictly larger than 0.")
        self._diversity_penalty = diversity_penalty
        if not isinstance(num_beams, int) or num_beams < 2:
            raise ValueError("`num_beams` should be an integer strictly larger than 1.")
        self._num_beams = num_beams
        if not isinstance(num_beam_groups, int) or num_beam_groups < 2:
            raise ValueError("`num_beam_groups` should be an integer strictly larger than 1.")
        if num_beam_groups > num_beams:
            raise ValueError("`beam_groups` has to be smaller or equal to `num_beams`.")
        self._num_sub_beams = num_beams // num_beam_groups

    def __call__(
        self,
        input_ids: torch.LongTensor,
        scores: torch.FloatTensor,
        current_tokens: torch.LongTensor,
        beam_group_idx: int,
    ) -> torch.FloatTensor:
        # hamming diversity: penalise using same token in current group which was used in previous groups at
        # the same time step
        batch_size = current_tokens.shape[0] // self._num_beams
        group_start_idx = beam_group_idx * self._num_sub_beams
        group_end_idx = min(group_start_idx + self._num_sub_beams, self._num_beams)
        group_size = group_end_idx - group_start_idx
        vocab_size = scores.shape[-1]

        if group_start_idx == 0:
            return scores

        scores_processed = scores.clone()
        for batch_idx in range(batch_size):
            # predicted tokens of last time step of previous groups
            previous_group_tokens = current_tokens[
                batch_idx * self._num_beams : batch_idx * self._num_beams + group_start_idx
            ]
            token_frequency = torch.zeros(vocab_size, dtype=torch.long, device=previous_group_tokens.device).scatter_add_(
                0, previous_group_tokens, torch.ones_like(previous_group_tokens)
            ).to(scores.device)
            scores_processed[batch_idx * group_size : (batch_idx + 1) * group_size] -= (
                self._diversity_penalty * token_frequency
            )

        return scores_processed


def make():
    return HammingDiversityLogitsProcessor(diversity_penalty=0.7, num_beams=6, num_beam_groups=3).__call__


def inputs():
    g = torch.Generator().manual_seed(29)
    calls = []
    V = 12
    for n, (batch, group) in enumerate([(2, 1), (2, 0), (1, 2), (3, 1), (3, 2), (1, 0), (2, 2), (4, 1)]):
        input_ids = torch.randint(0, V, (batch * 2, 5), generator=g)      # this group's beams so far
        scores = torch.log_softmax(torch.randn(batch * 2, V, generator=g), dim=-1)
        current_tokens = torch.randint(0, V, (batch * 6,), generator=g)
        if n == 4:
            current_tokens[:] = 3                                           # every group picked the same token
        calls.append((input_ids, scores, current_tokens, group))
    return calls


KIND = "dynamic-shape-loop"
