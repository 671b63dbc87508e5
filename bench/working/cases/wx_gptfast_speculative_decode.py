"""gpt-fast speculative decoding step: the draft model proposes speculate_k tokens, the target model
scores them in one pass, and tokens are accepted/rejected by the q/p rule.

Source: https://github.com/pytorch-labs/gpt-fast/blob/main/generate.py
        (multinomial_sample_one_no_sync, logits_to_probs, sample, decode_one_token, decode_n_tokens,
         model_forward, speculative_decode)
Breaks: `rejected_locations = (...).nonzero()` (data-dependent output shape) and
`if rejected_locations.shape[0] == 0:` (branch on it), then `accept_length = rejected_locations[0].item()`
and slicing `draft_tokens[:accept_length]`. The Transformer is reduced to embedding + position embedding
+ head with a KV-cache-like buffer written at input_pos; the CUDA-only
`torch.backends.cuda.sdp_kernel(...)` context around decode_one_token is dropped (CPU case).
HAND: none — the number of returned tokens (accepted draft tokens + 1) is data-dependent, so the output
shape depends on tensor values; the branch picks between outputs of different lengths.
"""
from typing import Optional, Tuple

import torch
from torch import nn

KIND = "nonzero + data-dependent branch/slice"


def multinomial_sample_one_no_sync(probs_sort):  # Does multinomial sampling without a cuda synchronization
    q = torch.empty_like(probs_sort).exponential_(1)
    return torch.argmax(probs_sort / q, dim=-1, keepdim=True).to(dtype=torch.int)


def logits_to_probs(logits, temperature: float = 1.0, top_k: Optional[int] = None):
    logits = logits / max(temperature, 1e-5)

    if top_k is not None:
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        pivot = v.select(-1, -1).unsqueeze(-1)
        logits = torch.where(logits < pivot, -float("Inf"), logits)
    probs = torch.nn.functional.softmax(logits, dim=-1)
    return probs


def sample(logits, temperature: float = 1.0, top_k: Optional[int] = None):
    probs = logits_to_probs(logits[0, -1], temperature, top_k)
    idx_next = multinomial_sample_one_no_sync(probs)
    return idx_next, probs


def decode_one_token(model, x: torch.Tensor, input_pos: torch.Tensor, **sampling_kwargs) -> Tuple[torch.Tensor, torch.Tensor]:
    # input_pos: [B, 1]
    assert input_pos.shape[-1] == 1
    logits = model(x, input_pos)
    return sample(logits, **sampling_kwargs)


def decode_n_tokens(model, cur_token: torch.Tensor, input_pos: torch.Tensor, num_new_tokens: int, callback=lambda _: _, **sampling_kwargs):
    new_tokens, new_probs = [], []
    for i in range(num_new_tokens):
        next_token, next_prob = decode_one_token(
            model, cur_token, input_pos, **sampling_kwargs
        )
        input_pos += 1
        new_tokens.append(next_token.clone())
        callback(new_tokens[-1])
        new_probs.append(next_prob.clone())
        cur_token = next_token.view(1, -1)

    return new_tokens, new_probs


def model_forward(model, x, input_pos):
    return model(x, input_pos)


def speculative_decode(
    model,
    draft_model,
    cur_token: torch.Tensor,
    input_pos: int,
    speculate_k: int,
    **sampling_kwargs
) -> torch.Tensor:
    # draft model inference sequentially
    device = cur_token.device
    orig_input_pos = torch.tensor([input_pos], dtype=torch.int64, device=cur_token.device)
    draft_tokens, draft_probs = decode_n_tokens(draft_model, cur_token.view(1, -1), orig_input_pos.clone(), speculate_k, **sampling_kwargs)

    draft_tokens = torch.cat(draft_tokens)
    # parallel inference on target model using draft tokens
    target_logits = model_forward(
        model,
        torch.cat([cur_token.view(1), draft_tokens]).view(1, -1),
        torch.arange(input_pos, input_pos + speculate_k + 1, device=cur_token.device)
    )
    target_probs = logits_to_probs(target_logits[0], **sampling_kwargs)
    draft_probs = torch.stack(draft_probs)
    # q: target prob, p: draft prob
    # q >= p: always accept draft token
    # q < p: q/p prob to accept draft token
    p = draft_probs[torch.arange(0, speculate_k, device=device), draft_tokens]
    q = target_probs[torch.arange(0, speculate_k, device=device), draft_tokens]
    accept_draft_prob = torch.minimum(torch.ones(()), q[:speculate_k]/ p)
    rejected_locations = (torch.rand_like(accept_draft_prob) > accept_draft_prob).nonzero()

    if rejected_locations.shape[0] == 0: # All draft tokens have been accepted
        accept_length = speculate_k + 1
        last_token = multinomial_sample_one_no_sync(target_probs[-1])
        # fill last token into draft model
        model_forward(
            draft_model,
            draft_tokens[-1].view(1, -1),
            orig_input_pos + speculate_k,
        )
        return torch.cat([draft_tokens, last_token])
    else:
        accept_length = rejected_locations[0].item()
        p = draft_probs[accept_length]
        q = target_probs[accept_length]
        new = q - p
        new = torch.where(new > 0, new, 0.0)
        new = new / new.sum()
        next_token = multinomial_sample_one_no_sync(new)
        return torch.cat([draft_tokens[:accept_length], next_token])


class TinyTransformer(nn.Module):
    def __init__(self, vocab=11, dim=8, max_seq=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_seq, dim)
        self.output = nn.Linear(dim, vocab)
        self.register_buffer("k_cache", torch.zeros(max_seq, dim))

    def forward(self, idx, input_pos):
        h = self.tok(idx.long()) + self.pos(input_pos.long().view(-1))
        self.k_cache.index_copy_(0, input_pos.long().view(-1), h[0].detach())
        h = h + self.k_cache[:input_pos.shape[-1]].mean(0)
        return self.output(torch.tanh(h))


class SpeculativeStep(nn.Module):
    def __init__(self, speculate_k=3):
        super().__init__()
        self.model = TinyTransformer()
        self.draft_model = TinyTransformer()
        with torch.no_grad():  # draft = noisy copy of the target, as a distilled draft would be
            for pd, pt in zip(self.draft_model.parameters(), self.model.parameters()):
                pd.copy_(pt + 0.3 * torch.randn_like(pt))
        self.speculate_k = speculate_k

    def forward(self, cur_token, input_pos, temperature, top_k):
        return speculative_decode(self.model, self.draft_model, cur_token, input_pos, self.speculate_k,
                                  temperature=temperature, top_k=top_k)


def make():
    torch.manual_seed(0)
    return SpeculativeStep()


def inputs():
    return [(torch.tensor(t, dtype=torch.int), pos, temp, k)
            for t, pos, temp, k in [(3, 4, 1.0, None), (7, 0, 0.8, 5), (1, 10, 1.5, None), (5, 2, 1.0, 3),
                                    (9, 6, 2.0, None), (0, 12, 0.5, 8), (4, 1, 1.2, None), (2, 8, 3.0, 11),
                                    (6, 3, 5.0, None), (8, 5, 0.3, 2)]]
