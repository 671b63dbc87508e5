"""Boolean masks joined with `torch.cat`/`torch.stack` are masks too: indexing with one selects a
data-dependent number of elements (blt's patch starts: `torch.cat([patch_mask, ~patch_mask])`).
Joined integer indices gather a fixed number and do not break."""
import torch


@torch.compile
def patch_starts(entropies, threshold: float):
    batch_size = entropies.shape[0]
    patch_mask = entropies > threshold
    seq_len = patch_mask.shape[1]
    token_indices = torch.arange(seq_len).unsqueeze(0).expand(batch_size, -1)
    sentinel = torch.full_like(token_indices, seq_len)
    padded_indices = torch.cat([token_indices, sentinel], dim=1)
    padded_mask = torch.cat([patch_mask, ~patch_mask], dim=1)
    return padded_indices[padded_mask].reshape(batch_size, seq_len)  # expect: GM402


@torch.compile
def gathered(x):
    first = torch.arange(2)
    last = torch.arange(x.shape[0] - 2, x.shape[0])
    both = torch.stack((x > 0, x < 1))
    return x[torch.cat([first, last])] * 2, both.float().sum()


def sample():
    return [(patch_starts, (torch.rand(2, 6) * 2, 1.0), {}), (gathered, (torch.randn(6),), {})]
