"""HF transformers assisted generation: `_speculative_sampling` (speculative decoding, algorithm 1 of
Leviathan et al.) accepts the assistant's candidate tokens until the first rejection and samples the
next token from the adjusted target distribution.

Source: https://github.com/huggingface/transformers/blob/main/src/transformers/generation/utils.py
(`_speculative_sampling`, called from `_assisted_decoding` when `do_sample=True`).

Breaks: `n_matches` is a 0-d tensor count of accepted tokens; `if is_done_candidate and n_matches ==
candidate_length` and `if n_matches < gamma` / `if n_matches > 0` branch on it, `p[:, n_matches, :]`
indexes with it and `new_candidate_input_ids[:, :n_matches]` slices with it (data-dependent size).

HAND: none — the number of returned tokens (`valid_tokens.shape[-1] == n_matches + 1`) depends on the
random acceptance test, so the output shape is data-dependent and the caller needs `n_matches` as the
count of accepted tokens.
"""

import torch


def _speculative_sampling(
    candidate_input_ids,
    candidate_logits,
    candidate_length,
    new_logits,
    is_done_candidate,
):
    """
    Applies sampling as in the speculative decoding paper (https://arxiv.org/pdf/2211.17192.pdf, algorithm 1). Returns
    the selected tokens, as well as the number of candidate matches.
    """
    new_candidate_input_ids = candidate_input_ids[:, -candidate_length:]
    # Gets the probabilities from the logits. q_i and p_i denote the assistant and model probabilities of the tokens
    # selected by the assistant, respectively.
    q = candidate_logits.softmax(dim=-1)
    q_i = q[:, torch.arange(candidate_length), new_candidate_input_ids].squeeze(0, 1)
    p = new_logits.softmax(dim=-1)
    p_i = p[:, torch.arange(candidate_length), new_candidate_input_ids].squeeze(0, 1)
    probability_ratio = p_i / q_i

    # When probability_ratio > 1 (i.e. q_i(x) < p_i(x), or "assistant probability of the candidate token is smaller
    # than the model probability for the same token"), keep the token. Otherwise reject with p = 1 - probability_ratio
    # (= keep with p = probability_ratio). Keep all the tokens until the first rejection
    r_i = torch.rand_like(probability_ratio)
    is_accepted = r_i <= probability_ratio
    n_matches = ((~is_accepted).cumsum(dim=-1) < 1).sum()  # this is `n` in algorithm 1

    # Ensure we don't generate beyond max_len or an EOS token (not in algorithm 1, but needed for correct behavior)
    if is_done_candidate and n_matches == candidate_length:
        # Output length is assumed to be `n_matches + 1`. Since we won't generate another token with the target model
        # due to acceptance on EOS we fix `n_matches`
        n_matches -= 1
        valid_tokens = new_candidate_input_ids[:, : n_matches + 1]
    else:
        # Next token selection: if there is a rejection, adjust the distribution from the main model before sampling.
        gamma = candidate_logits.shape[1]
        p_n_plus_1 = p[:, n_matches, :]
        if n_matches < gamma:
            q_n_plus_1 = q[:, n_matches, :]
            p_prime = torch.clamp((p_n_plus_1 - q_n_plus_1), min=0)
            p_prime.div_(p_prime.sum())
        else:
            p_prime = p_n_plus_1
        t = torch.multinomial(p_prime, num_samples=1).squeeze(1)[None, :]

        # The selected tokens include the matches (if any) plus the next sampled tokens
        if n_matches > 0:
            valid_tokens = torch.cat((new_candidate_input_ids[:, :n_matches], t), dim=-1)
        else:
            valid_tokens = t

    return valid_tokens, n_matches


def make():
    return _speculative_sampling


def _case(vocab, prompt_len, cand_len, agree, done, seed):
    g = torch.Generator().manual_seed(seed)
    prompt = torch.randint(0, vocab, (1, prompt_len), generator=g)
    cand = torch.randint(0, vocab, (1, cand_len), generator=g)
    candidate_input_ids = torch.cat([prompt, cand], dim=-1)
    candidate_logits = torch.randn(1, cand_len, vocab, generator=g)
    # the target model scores the candidates plus one extra position
    new_logits = torch.randn(1, cand_len + 1, vocab, generator=g)
    if agree is None:
        pass
    elif agree:
        # target strongly prefers the assistant's tokens: everything is accepted
        new_logits[0, torch.arange(cand_len), cand[0]] += 12.0
        candidate_logits[0, torch.arange(cand_len), cand[0]] -= 2.0
    else:
        # target strongly rejects the first candidate token
        new_logits[0, 0, cand[0, 0]] -= 12.0
        candidate_logits[0, 0, cand[0, 0]] += 12.0
    return (candidate_input_ids, candidate_logits, cand_len, new_logits, done)


def inputs():
    return [
        _case(11, 3, 4, True, False, 0),   # all accepted, n_matches == gamma
        _case(11, 3, 4, True, True, 1),    # all accepted on an EOS candidate
        _case(11, 3, 4, False, False, 2),  # first token rejected, n_matches == 0
        _case(11, 3, 4, False, True, 3),
        _case(13, 2, 5, True, False, 4),
        _case(13, 5, 3, False, False, 5),
        _case(7, 4, 2, True, True, 6),
        _case(9, 3, 6, None, False, 7),    # mixed: random acceptance
        _case(9, 3, 6, None, True, 8),
    ]


KIND = "branch-slice"
