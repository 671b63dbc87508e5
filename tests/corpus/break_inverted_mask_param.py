"""An annotated mask parameter that the function inverts inside an index is a boolean mask: both
`x[m]` and `x[~m]` select a data-dependent number of rows (higgs-audio's decoder layer, whose
`audio_token_mask: Optional[Tensor]` is first moved to the hidden states' device). A mask-named
parameter only ever used as a plain index says nothing of its dtype (transformers' attention masks
are 0/1 integers: `x[attention_mask]` gathers rows 0 and 1, a fixed number) and is left alone."""
from typing import Optional

import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = nn.Linear(3, 3)
        self.audio = nn.Linear(3, 3)

    def forward(self, hidden_states: torch.Tensor, audio_token_mask: Optional[torch.Tensor] = None):
        if audio_token_mask is None:
            return self.audio(hidden_states)
        audio_token_mask = audio_token_mask.to(hidden_states.device)
        text_states = self.text(hidden_states[~audio_token_mask])  # expect: GM402
        audio_states = self.audio(hidden_states[audio_token_mask])  # expect: GM402
        return text_states.sum() + audio_states.sum()


class Gather(nn.Module):
    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None):
        return hidden_states[attention_mask] * 2


def sample():
    x = torch.randn(4, 3)
    return [(Layer(), (x, torch.tensor([True, False, True, False])), {}), (Gather(), (x, torch.tensor([0, 1, 1, 0])), {})]
