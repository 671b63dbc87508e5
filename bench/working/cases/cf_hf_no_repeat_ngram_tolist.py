"""Hugging Face transformers' `NoRepeatNGramLogitsProcessor` builds a Python dict of the n-grams of
each hypothesis from `prev_input_ids[idx].tolist()` and looks up the current prefix with
`tuple(prev_input_ids[start_idx:cur_len].tolist())`, then bans the continuations.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/generation/logits_process.py
(`_get_ngrams`, `_get_generated_ngrams`, `_calc_banned_ngram_tokens`,
`NoRepeatNGramLogitsProcessor.__call__`; fairseq's `_no_repeat_ngram` does the same with `.tolist()`).

Breaks: `.tolist()` on the token ids (data-dependent operator), once per hypothesis and once per prefix
lookup.

HAND: vectorised — all n-grams with `input_ids.unfold(1, n, 1)`, a match of each n-gram's first n-1
tokens against the last n-1 tokens, and `scatter_add_` of the matches onto the vocabulary gives the
banned tokens, filled with `masked_fill(..., -inf)`.
"""
import torch

KIND = "tolist"


def _get_ngrams(ngram_size: int, prev_input_ids: torch.Tensor, num_hypos: int):
    """
    Assume ngram_size=2 and prev_input_ids=tensor([[40, 2883, 2712, 4346]]). The output of generated ngrams look like
    this {(40,): [2883], (2883,): [2712], (2712,): [4346]}.
    """
    # Initialize an empty list of dictionaries, one for each hypothesis (index) in the range of num_hypos
    generated_ngrams = [{} for _ in range(num_hypos)]
    for idx in range(num_hypos):
        gen_tokens = prev_input_ids[idx].tolist()
        generated_ngram = generated_ngrams[idx]
        # Loop through each n-gram of size ngram_size in the list of tokens (gen_tokens)
        for ngram in zip(*[gen_tokens[i:] for i in range(ngram_size)]):
            prev_ngram_tuple = tuple(ngram[:-1])
            generated_ngram[prev_ngram_tuple] = generated_ngram.get(prev_ngram_tuple, []) + [ngram[-1]]
    return generated_ngrams


def _get_generated_ngrams(banned_ngrams, prev_input_ids, ngram_size, cur_len):
    # Before decoding the next token, prevent decoding of ngrams that have already appeared
    start_idx = cur_len + 1 - ngram_size
    ngram_idx = tuple(prev_input_ids[start_idx:cur_len].tolist())
    return banned_ngrams.get(ngram_idx, [])


def _calc_banned_ngram_tokens(ngram_size: int, prev_input_ids: torch.Tensor, num_hypos: int, cur_len: int):
    """Copied from fairseq for no_repeat_ngram in beam_search"""
    if cur_len + 1 < ngram_size:
        # return no banned tokens if we haven't generated no_repeat_ngram_size tokens yet
        return [[] for _ in range(num_hypos)]
    generated_ngrams = _get_ngrams(ngram_size, prev_input_ids, num_hypos)
    banned_tokens = [
        _get_generated_ngrams(generated_ngrams[hypo_idx], prev_input_ids[hypo_idx], ngram_size, cur_len)
        for hypo_idx in range(num_hypos)
    ]
    return banned_tokens


class NoRepeatNGramLogitsProcessor:
    def __init__(self, ngram_size: int):
        if not isinstance(ngram_size, int) or ngram_size <= 0:
            raise ValueError(f"`ngram_size` has to be a strictly positive integer, but is {ngram_size}")
        self.ngram_size = ngram_size

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        num_batch_hypotheses = scores.shape[0]
        cur_len = input_ids.shape[-1]
        scores_processed = scores.clone()
        banned_batch_tokens = _calc_banned_ngram_tokens(self.ngram_size, input_ids, num_batch_hypotheses, cur_len)
        for i, banned_tokens in enumerate(banned_batch_tokens):
            scores_processed[i, banned_tokens] = -float("inf")

        return scores_processed


class Processors:
    def __init__(self):
        self.by_size = {n: NoRepeatNGramLogitsProcessor(n) for n in (1, 2, 3, 4)}

    def __call__(self, input_ids, scores, ngram_size):
        return self.by_size[ngram_size](input_ids, scores)


def make():
    return Processors().__call__


def inputs():
    torch.manual_seed(0)
    V = 7
    ids = lambda b, t: torch.randint(0, 4, (b, t))
    return [
        (ids(2, 6), torch.randn(2, V), 2),
        (ids(3, 8), torch.randn(3, V), 3),
        (torch.tensor([[1, 2, 3, 1, 2]]), torch.randn(1, V), 3),        # "1 2 3" seen, prefix "1 2": ban 3
        (torch.tensor([[5, 5, 5, 5]]), torch.randn(1, V), 2),           # repeated token
        (ids(2, 2), torch.randn(2, V), 3),                              # no complete n-gram yet
        (ids(2, 1), torch.randn(2, V), 3),                              # cur_len + 1 < n
        (ids(2, 5), torch.randn(2, V), 1),                              # unigram: ban every seen token
        (ids(4, 10), torch.randn(4, V), 4),
    ]
