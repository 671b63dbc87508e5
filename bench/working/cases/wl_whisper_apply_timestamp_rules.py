"""OpenAI Whisper's timestamp logit filter (`ApplyTimestampRules.apply`), run on the last-position
logits at every step of Whisper's decoding loop (`DecodingTask._main_loop` calls each logit filter
in place before `decoder.update`): per sequence of the batch it reads the sampled tokens back to
Python (`.tolist()`) to enforce that timestamps come in pairs, forbids timestamps smaller than the
last one (a slice whose end is a token taken from a boolean-mask selection), suppresses text at
the first step and timestamps past `max_initial_timestamp`, and forces a timestamp when their total
probability beats every text token (`if timestamp_logprob > max_text_token_logprob:`).

Source: https://github.com/openai/whisper/blob/c09a7ae299c4c34c5839a76380ae407e7d785914/whisper/decoding.py
(`ApplyTimestampRules`). Reduced: the tokenizer is a stand-in with the attributes the filter reads
(a 24-token vocabulary: text 0-9, eot 10, sot 11, no_timestamps 13, timestamps from 14); sample_begin
3, max_initial_timestamp_index 3. Batches of 1-3 sequences.

Breaks: `seq = [t for t in sampled_tokens.tolist()]` (`.tolist()` in the loop over the batch) when
tokens have been sampled, else (first step: `.tolist()` of an empty tensor reads nothing)
`timestamps = sampled_tokens[sampled_tokens.ge(...)]` (boolean-mask selection); both are graph
breaks inside a for loop, so dynamo skips the whole frame and runs it eagerly; the slice
`logits[k, timestamp_begin : timestamp_last]` bounded by a tensor and the branch
`if timestamp_logprob > max_text_token_logprob:` further on are never traced (latent).

HAND: the rules are applied to the whole batch with masks: "last was a timestamp" and
"penultimate was a timestamp" are columns of `sampled_tokens >= timestamp_begin` (their Python
defaults when the sequence is shorter stay Python constants), the last timestamp of each row is
gathered at the largest timestamp position (`torch.where(is_ts, arange, -1).max(1)`), and every
`logits[k, a:b] = -inf` becomes one `masked_fill_` with a (rows x vocabulary) mask built from
`arange(vocab)`; the final rule compares the per-row logsumexp and max as tensors. The logits are
changed in place exactly as before.
"""
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
        for k in range(tokens.shape[0]):
            sampled_tokens = tokens[k, self.sample_begin :]
            seq = [t for t in sampled_tokens.tolist()]
            last_was_timestamp = (
                len(seq) >= 1 and seq[-1] >= self.tokenizer.timestamp_begin
            )
            penultimate_was_timestamp = (
                len(seq) < 2 or seq[-2] >= self.tokenizer.timestamp_begin
            )

            if last_was_timestamp:
                if penultimate_was_timestamp:  # has to be non-timestamp
                    logits[k, self.tokenizer.timestamp_begin :] = -np.inf
                else:  # cannot be normal text tokens
                    logits[k, : self.tokenizer.eot] = -np.inf

            timestamps = sampled_tokens[
                sampled_tokens.ge(self.tokenizer.timestamp_begin)
            ]
            if timestamps.numel() > 0:
                # timestamps shouldn't decrease; forbid timestamp tokens smaller than the last
                # also force each segment to have a nonzero length, to prevent infinite looping
                if last_was_timestamp and not penultimate_was_timestamp:
                    timestamp_last = timestamps[-1]
                else:
                    timestamp_last = timestamps[-1] + 1
                logits[k, self.tokenizer.timestamp_begin : timestamp_last] = -np.inf

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
        for k in range(tokens.shape[0]):
            timestamp_logprob = logprobs[k, self.tokenizer.timestamp_begin :].logsumexp(
                dim=-1
            )
            max_text_token_logprob = logprobs[k, : self.tokenizer.timestamp_begin].max()
            if timestamp_logprob > max_text_token_logprob:
                logits[k, : self.tokenizer.timestamp_begin] = -np.inf


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
