"""Hand rewrite of cases/wl_whisper_apply_timestamp_rules.py: the per-sequence rules are applied to
the whole batch with (rows x vocabulary) masks and `masked_fill_`, with no reads back to Python."""
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

KIND = "tolist-mask-branch-loop"


class Tokenizer:
    """Stand-in for whisper.tokenizer.Tokenizer: the token ids the logit filters read."""

    def __init__(self):
        self.eot = 10
        self.sot = 11
        self.sot_prev = 12
        self.no_timestamps = 13
        self.timestamp_begin = 14


class LogitFilter:
    def apply(self, logits: Tensor, tokens: Tensor) -> None:
        """Apply any filtering or masking to logits in-place

        Parameters
        ----------
        logits : Tensor, shape = (n_batch, vocab_size)
            per-token logits of the probability distribution at the current step

        tokens : Tensor, shape = (n_batch, current_sequence_length)
            all tokens in the context so far, including the prefix and sot_sequence tokens

        """
        raise NotImplementedError


class ApplyTimestampRules(LogitFilter):
    def __init__(
        self,
        tokenizer: Tokenizer,
        sample_begin: int,
        max_initial_timestamp_index: Optional[int],
    ):
        self.tokenizer = tokenizer
        self.sample_begin = sample_begin
        self.max_initial_timestamp_index = max_initial_timestamp_index

    def apply(self, logits: Tensor, tokens: Tensor):
        # suppress <|notimestamps|> which is handled by without_timestamps
        if self.tokenizer.no_timestamps is not None:
            logits[:, self.tokenizer.no_timestamps] = -np.inf

        # timestamps have to appear in pairs, except directly before EOT; mask logits accordingly
        timestamp_begin = self.tokenizer.timestamp_begin
        n_batch = tokens.shape[0]
        vocab = torch.arange(logits.shape[-1], device=logits.device)[None, :]
        sampled_tokens = tokens[:, self.sample_begin :]
        n_sampled = sampled_tokens.shape[1]
        is_timestamp = sampled_tokens.ge(timestamp_begin)
        if n_sampled >= 1:
            last_was_timestamp = is_timestamp[:, -1]
        else:
            last_was_timestamp = torch.zeros(n_batch, dtype=torch.bool, device=tokens.device)
        if n_sampled >= 2:
            penultimate_was_timestamp = is_timestamp[:, -2]
        else:
            penultimate_was_timestamp = torch.ones(n_batch, dtype=torch.bool, device=tokens.device)
        pair_closed = (last_was_timestamp & penultimate_was_timestamp)[:, None]
        pair_open = (last_was_timestamp & ~penultimate_was_timestamp)[:, None]
        suppress = (pair_closed & (vocab >= timestamp_begin)) | (pair_open & (vocab < self.tokenizer.eot))

        if n_sampled >= 1:
            positions = torch.arange(n_sampled, device=tokens.device)
            last_position = torch.where(is_timestamp, positions, -1).max(dim=1).values
            has_timestamps = (last_position >= 0)[:, None]
            last_timestamp = sampled_tokens.gather(1, last_position.clamp(min=0)[:, None])
            # timestamps shouldn't decrease; forbid timestamp tokens smaller than the last
            # also force each segment to have a nonzero length, to prevent infinite looping
            timestamp_last = torch.where(pair_open, last_timestamp, last_timestamp + 1)
            suppress = suppress | (has_timestamps & (vocab >= timestamp_begin) & (vocab < timestamp_last))
        logits.masked_fill_(suppress, -np.inf)

        if tokens.shape[1] == self.sample_begin:
            # suppress generating non-timestamp tokens at the beginning
            logits[:, : self.tokenizer.timestamp_begin] = -np.inf

            # apply the `max_initial_timestamp` option
            if self.max_initial_timestamp_index is not None:
                last_allowed = (
                    self.tokenizer.timestamp_begin + self.max_initial_timestamp_index
                )
                logits[:, last_allowed + 1 :] = -np.inf

        # if sum of probability over timestamps is above any other token, sample timestamp
        logprobs = F.log_softmax(logits.float(), dim=-1)
        timestamp_logprob = logprobs[:, self.tokenizer.timestamp_begin :].logsumexp(dim=-1)
        max_text_token_logprob = logprobs[:, : self.tokenizer.timestamp_begin].max(dim=-1).values
        force_timestamp = (timestamp_logprob > max_text_token_logprob)[:, None]
        logits.masked_fill_(force_timestamp & (vocab < self.tokenizer.timestamp_begin), -np.inf)


def make():
    torch.manual_seed(0)
    return ApplyTimestampRules(Tokenizer(), sample_begin=3, max_initial_timestamp_index=3).apply


SOT = [11, 1, 2]  # sot, language, task


def _tokens(*rows):
    return torch.tensor([SOT + list(r) for r in rows], dtype=torch.long)


def _logits(g, b, ts_boost=0.0):
    x = torch.randn(b, 24, generator=g)
    x[:, 14:] += ts_boost
    return x


def inputs():
    g = torch.Generator().manual_seed(4)
    return [
        # first step: nothing sampled yet
        (_logits(g, 2), _tokens([], [])),
        (_logits(g, 1, ts_boost=2.0), _tokens([])),
        # one timestamp sampled (penultimate counts as a timestamp), one text token
        (_logits(g, 2), _tokens([15], [4])),
        # <ts> text <ts>: closing timestamp, text must follow; text after two timestamps
        (_logits(g, 3, ts_boost=1.0), _tokens([14, 3, 18], [15, 16, 5], [3, 4, 6])),
        # <ts><ts>: a pair, next must not be a timestamp; timestamps earlier, text last
        (_logits(g, 2, ts_boost=3.0), _tokens([14, 2, 17, 17], [14, 5, 19, 7])),
        # text only: no timestamps at all
        (_logits(g, 2, ts_boost=-1.0), _tokens([1, 2, 3], [4, 5, 6])),
        (_logits(g, 3, ts_boost=2.5), _tokens([16, 4, 4, 20], [9, 8, 22, 23], [15, 2, 21, 3])),
        (_logits(g, 1, ts_boost=0.5), _tokens([23, 23])),
        (_logits(g, 2, ts_boost=1.5), _tokens([14, 1, 2, 19, 19, 4], [2, 3, 4, 5, 6, 7])),
    ]
