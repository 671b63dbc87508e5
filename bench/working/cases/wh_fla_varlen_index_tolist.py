"""flash-linear-attention's varlen index helpers, as the native sparse attention path prepares them
for a packed batch (`fla/ops/nsa/parallel.py`: `token_indices = prepare_token_indices(cu_seqlens)`,
chunk indices / offsets for the block size): per-token (sequence id, position) pairs, per-chunk
(sequence id, chunk id) pairs and the chunk offsets, all derived from `cu_seqlens`. Each per-sequence
`arange` is built in a Python list comprehension over the lengths.

Source: https://github.com/fla-org/flash-linear-attention/pull/909 ("`prepare_chunk_indices`,
`prepare_position_ids`, `prepare_sequence_ids` and `prepare_token_indices` all built their
per-segment `arange`s via a `.tolist()` + Python list comprehension over `cu_seqlens`. That ... is
a Dynamo graph break"), code as before that PR:
https://github.com/fla-org/flash-linear-attention/blob/16405f24^/fla/ops/utils/index.py
(`prepare_lens`, `prepare_position_ids`, `prepare_sequence_ids`, `prepare_token_indices`,
`prepare_chunk_indices`, `prepare_chunk_offsets`). `triton.cdiv` is inlined as `cdiv`, the
`@tensor_cache` memoisation decorator is left out, `cu_seqlens_cpu` is always None here.

Breaks: `torch.arange(n, ...)` with `n` a 0-d tensor from `prepare_lens(cu_seqlens).unbind()` in
`prepare_position_ids` (data-dependent operator), and `cdiv(prepare_lens(cu_seqlens),
chunk_size).tolist()` in `prepare_chunk_indices` (data-dependent operator); after each, the rest of
the list comprehension runs in resumed frames, one small graph per `arange`.

HAND: the upstream rewrite (PR 909): one `_segmented_arange(counts)` helper built from
`repeat_interleave(arange(n_segs), counts)`, a `cumsum` of the counts and a gather, used with the
sequence lengths for the position ids and with the per-sequence chunk counts for the chunk
indices; bit-identical output for valid `cu_seqlens` (every sequence length >= 1). The
`repeat_interleave` has a data-dependent output size (no static bound on the total), so one site
remains in the helper.
"""
import torch
import torch.nn.functional as F

KIND = "tolist-loop"


def cdiv(x, y):
    return (x + y - 1) // y


def prepare_lens(cu_seqlens: torch.LongTensor) -> torch.LongTensor:
    return torch.diff(cu_seqlens)


def prepare_position_ids(cu_seqlens: torch.LongTensor, cu_seqlens_cpu: torch.LongTensor | None = None) -> torch.LongTensor:
    if cu_seqlens_cpu is not None:
        return torch.cat([
            torch.arange(n, dtype=cu_seqlens.dtype, device=cu_seqlens.device)
            for n in prepare_lens(cu_seqlens_cpu).unbind()
        ])
    return torch.cat([
        torch.arange(n, dtype=cu_seqlens.dtype, device=cu_seqlens.device)
        for n in prepare_lens(cu_seqlens).unbind()
    ])


def prepare_sequence_ids(cu_seqlens: torch.LongTensor, cu_seqlens_cpu: torch.LongTensor | None = None) -> torch.LongTensor:
    return prepare_position_ids(cu_seqlens, cu_seqlens_cpu).eq(0).cumsum(0) - 1


def prepare_token_indices(cu_seqlens: torch.LongTensor, cu_seqlens_cpu: torch.LongTensor | None = None) -> torch.LongTensor:
    position_ids = prepare_position_ids(cu_seqlens, cu_seqlens_cpu)
    return torch.stack([prepare_sequence_ids(cu_seqlens, cu_seqlens_cpu), position_ids], 1).to(cu_seqlens)


def prepare_chunk_indices(
    cu_seqlens: torch.LongTensor,
    chunk_size: int,
    cu_seqlens_cpu: torch.LongTensor | None = None,
) -> torch.LongTensor:
    if cu_seqlens_cpu is not None:
        indices = torch.cat([torch.arange(n, device=cu_seqlens.device)
                            for n in cdiv(prepare_lens(cu_seqlens_cpu), chunk_size).tolist()])
        return torch.stack([indices.eq(0).cumsum(0) - 1, indices], 1).to(cu_seqlens)
    indices = torch.cat([torch.arange(n) for n in cdiv(prepare_lens(cu_seqlens), chunk_size).tolist()])
    return torch.stack([indices.eq(0).cumsum(0) - 1, indices], 1).to(cu_seqlens)


def prepare_chunk_offsets(
    cu_seqlens: torch.LongTensor,
    chunk_size: int,
) -> torch.LongTensor:
    return F.pad(cdiv(prepare_lens(cu_seqlens), chunk_size), (1, 0), value=0).cumsum(-1)


def prepare_varlen_indices(cu_seqlens: torch.LongTensor, block_size: int):
    # 2-d sequence indices denoting the cu_seqlens of tokens in each sequence
    # for example, if the passed `cu_seqlens` is [0, 2, 6],
    # then there are 2 and 4 tokens in the 1st and 2nd sequences respectively, and `token_indices` will be
    # [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [1, 3]]
    token_indices = prepare_token_indices(cu_seqlens) if cu_seqlens is not None else None
    chunk_indices = prepare_chunk_indices(cu_seqlens, block_size) if cu_seqlens is not None else None
    chunk_offsets = prepare_chunk_offsets(cu_seqlens, block_size) if cu_seqlens is not None else None
    return token_indices, chunk_indices, chunk_offsets


def make():
    return prepare_varlen_indices


def _cu(lens, dtype=torch.long):
    return F.pad(torch.tensor(lens).cumsum(0), (1, 0)).to(dtype)


def inputs():
    return [
        (_cu([2, 4]), 2),
        (_cu([5]), 2),                          # a single sequence
        (_cu([1, 1, 1]), 4),                    # length-1 sequences
        (_cu([3, 7, 2, 4]), 4),
        (_cu([8, 8]), 8),                       # lengths that are multiples of the block
        (_cu([9, 1, 6], torch.int32), 4),       # int32 cu_seqlens (as the kernels take them)
        (_cu([4, 5, 6, 7, 1]), 3),
        (_cu([16]), 4),
        (_cu([2, 3], torch.int32), 1),          # block of one token
    ]
