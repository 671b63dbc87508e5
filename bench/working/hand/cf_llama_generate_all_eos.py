"""Hand rewrite of cases/cf_llama_generate_all_eos.py : the loop runs to total_len and
keeps the padding once every sequence has reached EOS, instead of `if all(eos_reached): break`."""
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import nn

KIND = "builtin-all-loop"


class Transformer(nn.Module):
    """Stand-in for llama's Transformer: a running-sum cache instead of the KV cache."""

    def __init__(self, vocab_size=8, dim=16, max_batch_size=4, max_seq_len=16):
        super().__init__()
        self.params = nn.Module()
        self.params.max_batch_size = max_batch_size
        self.params.max_seq_len = max_seq_len
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.output = nn.Linear(dim, vocab_size, bias=False)
        self.register_buffer("cache", torch.zeros(max_batch_size, max_seq_len, dim), persistent=False)

    def forward(self, tokens, start_pos):
        bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        self.cache[:bsz, start_pos:start_pos + seqlen] = h
        ctx = self.cache[:bsz, :start_pos + seqlen].cumsum(1)[:, start_pos:]
        ctx = ctx / torch.arange(start_pos + 1, start_pos + seqlen + 1)[:, None]
        return self.output(torch.tanh(ctx)).float() * 3


class Tokenizer:
    pad_id = -1
    eos_id = 2


def sample_top_p(probs, p):
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    mask = probs_sum - probs_sort > p
    probs_sort[mask] = 0.0
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    next_token = torch.multinomial(probs_sort, num_samples=1)
    next_token = torch.gather(probs_idx, -1, next_token)
    return next_token


class Llama:
    def __init__(self, model, tokenizer):
        self.model = model
        self.tokenizer = tokenizer

    @torch.no_grad()
    def generate(
        self,
        prompt_tokens: List[List[int]],
        max_gen_len: int,
        temperature: float = 0.6,
        top_p: float = 0.9,
        logprobs: bool = False,
        echo: bool = False,
    ):
        params = self.model.params
        bsz = len(prompt_tokens)
        assert bsz <= params.max_batch_size, (bsz, params.max_batch_size)

        min_prompt_len = min(len(t) for t in prompt_tokens)
        max_prompt_len = max(len(t) for t in prompt_tokens)
        assert max_prompt_len <= params.max_seq_len
        total_len = min(params.max_seq_len, max_gen_len + max_prompt_len)

        pad_id = self.tokenizer.pad_id
        tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long)
        for k, t in enumerate(prompt_tokens):
            tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long)
        if logprobs:
            token_logprobs = torch.zeros_like(tokens, dtype=torch.float)

        prev_pos = 0
        eos_reached = torch.tensor([False] * bsz)
        input_text_mask = tokens != pad_id
        for cur_pos in range(min_prompt_len, total_len):
            # after all sequences reached EOS the fed tokens may be padding (-1); those logits are unused
            logits = self.model.forward(tokens[:, prev_pos:cur_pos].clamp(min=0), prev_pos)
            if temperature > 0:
                probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
                next_token = sample_top_p(probs, top_p)
            else:
                next_token = torch.argmax(logits[:, -1], dim=-1)

            next_token = next_token.reshape(-1)
            # only replace token if prompt has already been generated
            # once every sequence has reached EOS the source stops; keep the padding instead
            all_done = eos_reached.all()
            next_token = torch.where(
                input_text_mask[:, cur_pos] | all_done, tokens[:, cur_pos], next_token
            )
            tokens[:, cur_pos] = next_token
            if logprobs:
                step_logprobs = -F.cross_entropy(
                    input=logits.transpose(1, 2),
                    target=tokens[:, prev_pos + 1 : cur_pos + 1],
                    reduction="none",
                    ignore_index=pad_id,
                )
                token_logprobs[:, prev_pos + 1 : cur_pos + 1] = torch.where(
                    all_done, token_logprobs[:, prev_pos + 1 : cur_pos + 1], step_logprobs
                )
            eos_reached |= (~input_text_mask[:, cur_pos]) & (
                next_token == self.tokenizer.eos_id
            )
            prev_pos = cur_pos

        # (the source then cuts each row at EOS from `tokens.tolist()`; that Python post-processing
        # is left to the caller here)
        return tokens, (token_logprobs if logprobs else None)


def make():
    torch.manual_seed(0)
    return Llama(Transformer(), Tokenizer()).generate


def inputs():
    return [
        ([[1, 3, 4], [5, 6]], 8, 0.0, 0.9, False, False),
        ([[1, 3, 4], [5, 6]], 8, 0.6, 0.9, True, False),
        ([[2], [2]], 6, 1.0, 0.9, False, True),
        ([[7, 7, 7, 7]], 10, 1.5, 1.0, True, False),
        ([[0, 1], [3, 4], [5, 6], [7, 1]], 6, 0.0, 0.9, True, True),
        ([[4, 4, 4], [1], [6, 5]], 5, 2.0, 0.5, False, False),
        ([[3]], 12, 0.8, 0.95, True, False),
        ([[5, 1, 0, 3, 2, 6]], 4, 0.0, 0.9, False, False),
    ]
