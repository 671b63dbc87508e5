"""TorchMD-Net GatedEquivariantBlock (output head of the equivariant transformer for vector /
tensor properties), with its "atoms outside the cutoff" warning.

Source: https://github.com/torchmd/torchmd-net/blob/00bfa6e2b8c1c0e010583f4132c2711475415690/torchmdnet/models/utils.py
(GatedEquivariantBlock, act_class_mapping; kept as in the source). `rank_zero_warn` is Lightning's
(https://github.com/Lightning-AI/utilities/blob/main/src/lightning_utilities/core/rank_zero.py),
reduced to its rank-0 `warnings.warn` (stacklevel adjusted for the removed wrapper frames, so the
warning is attributed to the same caller). hidden 8, out 4, 5-7 atoms.

Breaks: `if not mask.all():` is a data-dependent branch; the warning text formats a tensor
(`f"Skipping gradients for {(~mask).sum()} atoms ..."`) and calls warnings.warn; and
`vec1[mask] = torch.norm(vec1_buffer[mask], dim=-2)` gathers and writes through a boolean mask
(data-dependent output shape).

HAND: the check and warning move into a torch.library.custom_op registered with an ORDERED effect
(same text, same count, at run time); the masked norm is
`torch.where(mask, norm(where(mask, vec1_buffer, 1)), 0)` (the "safe operand" keeps the zero
vectors' NaN norm gradient out, as the source's comment intends), giving the same values and
gradients.
"""
import warnings

import torch
from torch import nn

KIND = "warn with tensor f-string + mask.all() branch + bool-mask setitem"
GRAD = True

_RANK = 0


def rank_zero_warn(message, stacklevel=2, **kwargs):
    if _RANK == 0:
        warnings.warn(message, stacklevel=stacklevel, **kwargs)


act_class_mapping = {
    "silu": nn.SiLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
}


class GatedEquivariantBlock(nn.Module):
    """Gated Equivariant Block as defined in Schütt et al. (2021):
    Equivariant message passing for the prediction of tensorial properties and molecular spectra
    """

    def __init__(
        self,
        hidden_channels,
        out_channels,
        intermediate_channels=None,
        activation="silu",
        scalar_activation=False,
    ):
        super(GatedEquivariantBlock, self).__init__()
        self.out_channels = out_channels

        if intermediate_channels is None:
            intermediate_channels = hidden_channels

        self.vec1_proj = nn.Linear(hidden_channels, hidden_channels, bias=False)
        self.vec2_proj = nn.Linear(hidden_channels, out_channels, bias=False)

        act_class = act_class_mapping[activation]
        self.update_net = nn.Sequential(
            nn.Linear(hidden_channels * 2, intermediate_channels),
            act_class(),
            nn.Linear(intermediate_channels, out_channels * 2),
        )

        self.act = act_class() if scalar_activation else None

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.vec1_proj.weight)
        nn.init.xavier_uniform_(self.vec2_proj.weight)
        nn.init.xavier_uniform_(self.update_net[0].weight)
        self.update_net[0].bias.data.fill_(0)
        nn.init.xavier_uniform_(self.update_net[2].weight)
        self.update_net[2].bias.data.fill_(0)

    def forward(self, x, v):
        vec1_buffer = self.vec1_proj(v)

        # detach zero-entries to avoid NaN gradients during force loss backpropagation
        vec1 = torch.zeros(
            vec1_buffer.size(0), vec1_buffer.size(2), device=vec1_buffer.device
        )
        mask = (vec1_buffer != 0).view(vec1_buffer.size(0), -1).any(dim=1)
        if not mask.all():
            rank_zero_warn(
                (
                    f"Skipping gradients for {(~mask).sum()} atoms due to vector features being zero. "
                    "This is likely due to atoms being outside the cutoff radius of any other atom. "
                    "These atoms will not interact with any other atom unless you change the cutoff."
                )
            )
        vec1[mask] = torch.norm(vec1_buffer[mask], dim=-2)

        vec2 = self.vec2_proj(v)

        x = torch.cat([x, vec1], dim=-1)
        x, v = torch.split(self.update_net(x), self.out_channels, dim=-1)
        v = v.unsqueeze(1) * vec2

        if self.act is not None:
            x = self.act(x)
        return x, v


def make():
    torch.manual_seed(0)
    return GatedEquivariantBlock(8, 4, activation="silu", scalar_activation=True)


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    # number of atoms, indices of isolated atoms (all-zero vector features)
    specs = [(5, []), (5, [2]), (6, [0, 4]), (7, []), (4, [3]), (6, []), (7, [1, 2, 6]), (5, [4])]
    for n, iso in specs:
        x = torch.randn(n, 8, generator=g)
        v = torch.randn(n, 3, 8, generator=g)
        for i in iso:
            v[i] = 0.0
        out.append((x, v))
    return out
