"""Hand rewrite of cases/wh_fla_varlen_index_tolist.py: the upstream fix of
https://github.com/fla-org/flash-linear-attention/pull/909. `prepare_position_ids` and
`prepare_chunk_indices` use one `_segmented_arange(counts)` helper (`repeat_interleave` of the
segment ids by the counts, a `cumsum` of the counts and a gather) instead of `.unbind()` /
`.tolist()` and a Python loop of `arange`s: bit-identical values and the same dtypes for valid
`cu_seqlens` (every length >= 1). The `repeat_interleave` still has a data-dependent output size."""
import torch
import torch.nn.functional as F

KIND = "tolist-loop"


def cdiv(x, y):
    return (x + y - 1) // y


def prepare_lens(cu_seqlens: torch.LongTensor) -> torch.LongTensor:
    return torch.diff(cu_seqlens)


def _segmented_arange(counts: torch.LongTensor) -> tuple[torch.LongTensor, torch.LongTensor]:
    """Expand per-segment counts into flat per-slot index tensors.

    counts = [2, 3] -> seg_id = [0, 0, 1, 1, 1], intra_idx = [0, 1, 0, 1, 2]
    """
    seg_id = torch.repeat_interleave(
        torch.arange(counts.numel(), device=counts.device, dtype=counts.dtype),
        counts,
    )
    seg_start = F.pad(counts.cumsum(0), (1, 0))[:-1]
    intra_idx = torch.arange(seg_id.shape[0], device=counts.device, dtype=counts.dtype) - seg_start[seg_id]
    return seg_id, intra_idx


def prepare_position_ids(cu_seqlens: torch.LongTensor, cu_seqlens_cpu: torch.LongTensor | None = None) -> torch.LongTensor:
    src = cu_seqlens_cpu if cu_seqlens_cpu is not None else cu_seqlens
    _, position_ids = _segmented_arange(prepare_lens(src))
    return position_ids.to(cu_seqlens)


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
    src = cu_seqlens_cpu if cu_seqlens_cpu is not None else cu_seqlens
    chunk_counts = (prepare_lens(src) + (chunk_size - 1)).div(chunk_size, rounding_mode='floor')
    seg_id, intra_chunk_idx = _segmented_arange(chunk_counts)
    return torch.stack([seg_id, intra_chunk_idx], 1).to(cu_seqlens)


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
