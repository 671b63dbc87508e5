"""`position_ids.max().item() + 1` used as a size for a rotary cache splits the graph (GM201)."""
import torch


@torch.compile
def rotary_cache(position_ids, inv_freq):
    seq_len = position_ids.max().item() + 1  # expect: GM201
    t = torch.arange(seq_len, dtype=inv_freq.dtype)
    freqs = torch.outer(t, inv_freq)
    return freqs.cos()[position_ids]


def sample():
    return rotary_cache, (torch.tensor([0, 1, 2, 3]), torch.rand(4)), {}
