"""Hand rewrite of cases/cf_hf_no_repeat_ngram_tolist.py: the banned tokens are found with tensor ops
(`unfold` n-grams, prefix match, `scatter_add_` onto the vocabulary) instead of Python dicts built from
`.tolist()`."""
import torch

KIND = "tolist"


class NoRepeatNGramLogitsProcessor:
    def __init__(self, ngram_size: int):
        if not isinstance(ngram_size, int) or ngram_size <= 0:
            raise ValueError(f"`ngram_size` has to be a strictly positive integer, but is {ngram_size}")
        self.ngram_size = ngram_size

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        n = self.ngram_size
        cur_len = input_ids.shape[-1]
        scores_processed = scores.clone()
        if cur_len < n:
            # no complete n-gram yet: nothing is banned
            return scores_processed
        ngrams = input_ids.unfold(1, n, 1)                        # (B, cur_len - n + 1, n)
        prefix = input_ids[:, cur_len + 1 - n:]                   # the last n - 1 tokens
        match = (ngrams[:, :, :-1] == prefix[:, None, :]).all(-1)  # n-grams that start with the prefix
        banned = torch.zeros(scores.shape, dtype=torch.int64).scatter_add_(1, ngrams[:, :, -1], match.long())
        return scores_processed.masked_fill(banned > 0, -float("inf"))


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
