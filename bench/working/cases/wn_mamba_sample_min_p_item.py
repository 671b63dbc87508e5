"""Mamba's token sampler (`mamba_ssm.utils.generation.sample`), called at every step of
`decode()` on the last-position logits: greedy when `top_k == 1`, top-k (+ top-p) sampling, plain
top-p sampling, or min-p sampling, where the threshold is the first logit read back to Python with
`.item()` and scaled by `min_p`; logits below it are masked before `torch.multinomial`.

Source: https://github.com/state-spaces/mamba/blob/e9594ce1c732d97440f0332fdc43170a2294dbfa/mamba_ssm/utils/generation.py
(`sample`, `modify_logits_for_min_p_filtering`, `modify_logits_for_top_p_filtering`). Reduced: a
32-token vocabulary; batch 1 on the min-p path (`.item()` needs a single element, as in `decode` with
one prompt), 1-3 elsewhere.

Breaks: `max_prob = logits_top[..., 0].item()` (`.item()` with capture_scalar_outputs=False); the
Python float it returns then decides `if min_p <= 0.0 or min_p >= 1.0: return` in
`modify_logits_for_min_p_filtering`.

HAND: the threshold stays a tensor: `logits_top[..., 0]` in float64 (as the Python float) times
`min_p`; the early return of `modify_logits_for_min_p_filtering` becomes part of the mask
(`(logits < min_prob) & (min_prob > 0) & (min_prob < 1)`, false for NaN as both comparisons were),
and the comparison with the float32 logits casts the float64 0-d threshold to float32 exactly as the
Python scalar was. The random stream is unchanged (same `torch.multinomial` calls). Removes the site.
"""
import torch

KIND = "item-threshold"


def modify_logits_for_min_p_filtering(logits, min_p):
    """Set the logits for none min_p values to -inf. Done in-place."""
    if min_p <= 0.0 or min_p >= 1.0:
        return
    indices_to_remove = logits < min_p
    logits.masked_fill_(indices_to_remove, float("-Inf"))


# https://github.com/NVIDIA/Megatron-LM/blob/0bb597b42c53355a567aba2a1357cc34b9d99ddd/megatron/text_generation/sampling.py
# https://github.com/huggingface/transformers/blob/a44985b41cfa2de48a5e1de7f1f93b7483da25d1/src/transformers/generation/logits_process.py#L170
def modify_logits_for_top_p_filtering(logits, top_p):
    """Set the logits for none top-p values to -inf. Done in-place."""
    if top_p <= 0.0 or top_p >= 1.0:
        return
    # First sort and calculate cumulative sum of probabilities.
    sorted_logits, sorted_indices = torch.sort(logits, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    # Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    # scatter sorted tensors to original indexing
    indices_to_remove = sorted_indices_to_remove.scatter(
        1, sorted_indices, sorted_indices_to_remove
    )
    logits.masked_fill_(indices_to_remove, float("-inf"))


def sample(logits, top_k=1, top_p=0.0, min_p=0.0, temperature=1.0):
    """Sample from top-k logits.
    Arguments:
        logits: Tensor of shape (batch_size, vocab_size)
    """
    if top_k == 1:  # Short-circuit for greedy decoding
        return logits.argmax(dim=-1)
    else:
        if top_p > 0.0:
            assert top_p <= 1.0, "top-p should be in (0, 1]."
        if top_k > 0:
            top_k = min(top_k, logits.size(-1))  # Safety check
            logits_top, indices = torch.topk(logits, top_k, dim=-1)
            if temperature != 1.0:
                logits_top /= temperature
            modify_logits_for_top_p_filtering(logits_top, top_p)
            return indices[
                torch.arange(indices.shape[0], device=indices.device),
                torch.multinomial(torch.softmax(logits_top, dim=-1), num_samples=1).squeeze(dim=-1),
            ]
        else:
            if min_p > 0.0:
                logits_top = logits.clone()
                max_prob = logits_top[..., 0].item()
                min_prob = max_prob * min_p
                modify_logits_for_min_p_filtering(logits_top, min_prob)
                if temperature != 1.0:
                    logits_top /= temperature
                return torch.multinomial(torch.softmax(logits_top, dim=-1), num_samples=1).squeeze(dim=-1)
            # Clone so that when we modify for top_p we don't change the original logits
            logits_top = logits / temperature if temperature != 1.0 else logits.clone()
            modify_logits_for_top_p_filtering(logits_top, top_p)
            return torch.multinomial(torch.softmax(logits_top, dim=-1), num_samples=1).squeeze(
                dim=-1
            )


def make():
    return sample


def inputs():
    g = torch.Generator().manual_seed(11)
    r = lambda b, scale=2.0, shift=0.0: torch.randn(b, 32, generator=g) * scale + shift
    return [
        (r(2),),                                   # greedy
        (r(3), 5, 0.0, 0.0, 0.7),                  # top-k with temperature
        (r(2), 8, 0.9),                            # top-k + top-p
        (r(1), 0, 0.0, 0.3, 1.0),                  # min-p, threshold -1.01 <= 0: no filtering
        (r(1, shift=4.0), 0, 0.0, 0.5, 0.8),       # min-p, threshold 0.63 in (0, 1): filters
        (r(1, shift=-4.0), 0, 0.0, 0.2),           # min-p, threshold -0.41 <= 0: no filtering
        (r(1, scale=0.3, shift=1.5), 0, 0.0, 0.6), # min-p, threshold 0.95: filters
        (r(2), 0, 0.8, 0.0, 1.3),                  # plain top-p with temperature
        (r(1), 0, 0.0, 0.9, 0.5),                  # min-p, threshold 1.90 >= 1: no filtering; temperature
    ]
