"""A parameter whose only tensor evidence is that it is the first element of the list given to
`torch.cat`: a list of tensors, so `int(scale)` reads a tensor's value and breaks (ALBEF's
`torch.cat([text_attention_mask, text_atts_neg], dim=0)`)."""
import torch
from torch import nn


class Scaled(nn.Module):
    def forward(self, x, scale):
        both = torch.cat([scale, x.new_ones(1)])
        times = int(scale)  # expect: GM203
        return both * times + x.sum()


def sample():
    return [(Scaled(), (torch.randn(3), torch.tensor([2.0])), {})]
