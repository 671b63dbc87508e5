"""BLT (Byte Latent Transformer) entropy patching: a small byte-level entropy model scores each byte,
and patch boundaries are placed where the entropy exceeds a threshold (Patcher.patch, realtime patching),
giving the patch lengths the latent transformer consumes. Tokenizer-free text model.

Source: https://github.com/facebookresearch/blt/blob/main/bytelatent/data/patcher.py
        (entropy, calculate_entropies, patch_start_mask_from_entropy_with_monotonicity,
         patch_start_ids_from_patch_start_mask, check_non_zero_after_zero, patch_lengths_from_start_ids,
         find_entropy_patch_start_ids, Patcher.patch)
Breaks: `assert torch.all(split >= 0) and torch.all(split < 260)` (tensor truth value), `if max_patches == 0`
(data-dependent branch), boolean-mask indexing `all_patch_ids[patch_start_mask_padded]` (data-dependent
shape), `[:, :max_patches]` slicing with a tensor bound, and the asserts
`assert torch.all(patch_lengths >= 0), f"{patch_lengths}"` / `assert not check_non_zero_after_zero(...)`.
The entropy model is reduced to embedding + causal conv + linear; pydantic args become attributes.
HAND: none — the result's width (max number of patches in the batch) is data-dependent, so the output
shape itself depends on tensor values.
"""
from contextlib import nullcontext

import torch
from torch import nn
from torch.nn import functional as F

KIND = "data-dependent shape + asserts"


def entropy(scores):
    log_probs = F.log_softmax(scores, dim=-1)
    probs = torch.exp(log_probs)
    p_log_p = log_probs * probs
    entropy = -p_log_p.sum(dim=-1)
    return entropy


def calculate_entropies(
    tokens: torch.tensor,
    entropy_model,
    patching_batch_size,
    device: str | None = None,
    enable_grad: bool = False,
):
    grad_context = nullcontext() if enable_grad else torch.no_grad()

    with grad_context:
        entropies = []
        max_length = getattr(entropy_model, "max_length", 8192)
        batch_numel = max_length * patching_batch_size
        splits = torch.split(tokens.flatten(), batch_numel)
        for split in splits:
            pad_size = (max_length - (split.numel() % max_length)) % max_length
            pad = torch.zeros(
                pad_size, dtype=split.dtype, device=split.device, requires_grad=False
            )
            split = torch.cat((split, pad), dim=0)
            split = split.reshape(-1, max_length)
            if device is not None:
                split = split.to(device)
            assert torch.all(split >= 0) and torch.all(split < 260)
            pred = entropy_model(split)
            pred = pred.reshape(-1, pred.shape[-1])[
                : split.numel() - pad_size, :
            ]  # [batch_size * seq_len, vocab]
            pred_entropies = entropy(pred)
            entropies.append(pred_entropies)

        concat_entropies = torch.cat(entropies, dim=0)
        concat_entropies = concat_entropies.reshape(tokens.shape)
    return concat_entropies


def patch_start_mask_from_entropy_with_monotonicity(entropies, t):
    bs, seq_len = entropies.shape
    mask = torch.zeros_like(entropies, dtype=torch.bool)
    mask[:, 0] = True

    # Calculate differences between consecutive elements along the sequence length
    differences = entropies[:, 1:] - entropies[:, :-1]

    # Calculate conditions for all elements except the first one in each sequence
    condition = differences > t

    # Update the mask based on the condition
    mask[:, 1:] = condition

    return mask


def patch_start_ids_from_patch_start_mask(patch_start_mask):
    bs, trunc_seq_len = patch_start_mask.shape
    max_patches = patch_start_mask.sum(dim=1).max()
    if max_patches == 0:
        patch_start_ids = torch.full(
            (bs, trunc_seq_len),
            trunc_seq_len,
            dtype=torch.long,
            device=patch_start_mask.device,
        )
    else:
        patch_ids = (
            torch.arange(trunc_seq_len, device=patch_start_mask.device)
            .unsqueeze(0)
            .repeat(bs, 1)
        )
        extra_patch_ids = torch.full(
            (bs, trunc_seq_len),
            trunc_seq_len,
            dtype=torch.long,
            device=patch_start_mask.device,
        )
        all_patch_ids = torch.cat((patch_ids, extra_patch_ids), dim=1)
        patch_start_mask_padded = torch.cat(
            (patch_start_mask, ~patch_start_mask), dim=1
        )
        patch_start_ids = all_patch_ids[patch_start_mask_padded].reshape(
            bs, trunc_seq_len
        )[:, :max_patches]
    return patch_start_ids


def check_non_zero_after_zero(tensor):
    zero_mask = tensor == 0
    shifted_mask = torch.cat(
        [
            torch.zeros(tensor.shape[0], 1, dtype=torch.bool, device=tensor.device),
            zero_mask[:, :-1],
        ],
        dim=1,
    )
    non_zero_after_zero = (tensor != 0) & shifted_mask
    return non_zero_after_zero.any()


def patch_lengths_from_start_ids(patch_start_ids, seq_len):
    last_ids = torch.full_like(patch_start_ids[:, :1], seq_len - 1)
    patch_end_ids = torch.cat((patch_start_ids[:, 1:] - 1, last_ids), dim=1)
    patch_lengths = patch_end_ids - patch_start_ids + 1
    assert torch.all(patch_lengths >= 0), f"{patch_lengths}"
    assert not check_non_zero_after_zero(patch_lengths), f"{patch_lengths}"
    return patch_lengths


def find_entropy_patch_start_ids(
    entropies,
    patch_size=None,
    threshold=None,
    threshold_add=None,
    monotonicity=False,
    include_next_token=True,
):
    bs, seq_len = entropies.shape[:2]

    first_ids = (
        torch.tensor([0, 1], dtype=torch.long, device=entropies.device)
        .unsqueeze(0)
        .repeat(bs, 1)
    )
    preds_truncation_len = first_ids.shape[
        1
    ]  # remove the first preds because they will be start of patches.
    entropies = entropies[:, 1:]
    if threshold is None:
        num_patches = seq_len // patch_size
        patch_start_ids = entropies.topk(num_patches - 2, dim=1).indices
        patch_start_ids = patch_start_ids.sort(dim=1).values
    else:
        # Assumes that there is at least one token going over the threshold
        if monotonicity:
            patch_start_mask = patch_start_mask_from_entropy_with_monotonicity(
                entropies, threshold
            )
        else:
            patch_start_mask = entropies > threshold
        if not include_next_token:
            patch_start_mask = patch_start_mask[:, :-1]
        # patch_start_mask[1:] |= tokens[:-1] < OFFSET
        patch_start_ids = patch_start_ids_from_patch_start_mask(patch_start_mask)

    patch_start_ids = torch.cat(
        (first_ids, patch_start_ids + preds_truncation_len), dim=1
    )
    return patch_start_ids


class TinyEntropyModel(nn.Module):
    def __init__(self, vocab=260, dim=16, max_length=12):
        super().__init__()
        self.max_length = max_length
        self.emb = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, dim, 3)
        self.out = nn.Linear(dim, vocab)

    def forward(self, x):
        h = self.emb(x).transpose(1, 2)
        h = torch.tanh(self.conv(F.pad(h, (2, 0))))
        return self.out(h.transpose(1, 2)) * 3.0


class Patcher(nn.Module):
    def __init__(self, monotonicity=False):
        super().__init__()
        self.entropy_model = TinyEntropyModel()
        self.patching_batch_size = 1
        self.patch_size = 4
        self.threshold_add = None
        self.monotonicity = monotonicity

    def forward(self, tokens, threshold, include_next_token=False):
        bs, seq_len = tokens.shape
        seq_len_next_tok = seq_len + 1 if include_next_token else seq_len
        scores = calculate_entropies(tokens, self.entropy_model, self.patching_batch_size)
        patch_start_ids = find_entropy_patch_start_ids(
            scores,
            self.patch_size,
            include_next_token=include_next_token,
            threshold=threshold,
            threshold_add=self.threshold_add,
            monotonicity=self.monotonicity,
        )
        patch_lengths = patch_lengths_from_start_ids(patch_start_ids, seq_len_next_tok)
        return patch_lengths, scores


def make():
    torch.manual_seed(0)
    return Patcher()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for thr in (5.0, 5.1, 5.15, 100.0, 5.2, 0.0, 5.25, 5.05):
        tokens = torch.randint(0, 260, (2, 12), generator=g)
        out.append((tokens, thr))
    return out


def failing_inputs():
    t = torch.randint(0, 260, (2, 12), generator=torch.Generator().manual_seed(1))
    t[1, 3] = 300
    return [(t, 5.3)]
