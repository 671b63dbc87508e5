"""A boolean mask moved to another tensor's device is still a mask: indexing with it selects a
data-dependent number of elements (higgs-audio's `audio_token_mask.to(hidden_states.device)`).
A cast to another dtype is not (`.to(torch.long)` gathers a fixed number)."""
import torch


@torch.compile
def audio_rows(hidden_states, ids):
    audio_token_mask = (ids > 2).to(hidden_states.device)
    return hidden_states[audio_token_mask].sum() * 2  # expect: GM402


@torch.compile
def as_indices(hidden_states, ids):
    index = (ids > 2).to(torch.long)
    return hidden_states[index].sum() * 2


def sample():
    ids = torch.tensor([1, 3, 5, 0])
    return [(audio_rows, (torch.randn(4, 3), ids), {}), (as_indices, (torch.randn(4, 3), ids), {})]
