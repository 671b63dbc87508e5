"""torchgeo CopernicusFM `forward_features`: the positional embedding of a patch batch gets a
coordinate, an area and a time embedding from Fourier expansions of the metadata, or learned
"unknown" tokens when the batch's metadata holds NaN; `FourierExpansion` checks the input range.

Source: https://github.com/microsoft/torchgeo/blob/main/torchgeo/models/copernicusfm.py
(`CopernicusFM.forward_features`, `get_coord_pos_embed`, `get_area_pos_embed`, `get_time_pos_embed`,
`FourierExpansion.forward`). The dynamic hypernetwork patch embedding is reduced to a 2x2 conv, the
ViT blocks to one pre-norm MLP block; the position embedding resize is the identity at the native
size and is left out.

Breaks: `if torch.isnan(lons).any() or torch.isnan(lats).any():`, `if torch.isnan(areas).any():`,
`if torch.isnan(times).any():` (data-dependent branches on the metadata) and, inside
`FourierExpansion.forward`, `if self.assert_range and not in_range_or_zero:` (data-dependent
branch guarding `raise AssertionError`).

HAND: each embedding is computed from NaN-free operands (`torch.where(has_nan, 0, lons)`, the safe
operand trick) and selected with `torch.where(has_nan, token, embedding)` (same values; the shape
(B,1,D) instead of (1,1,D) broadcasts to the same output); the range check runs at run time in a
`torch.library.custom_op` with an ORDERED effect that raises the same AssertionError, only when the
source would have raised (no NaN and out of range).
"""
import math

import numpy as np
import torch
from torch import Tensor, nn

KIND = "branch-nan-any"


class FourierExpansion(nn.Module):
    def __init__(self, lower: float, upper: float, assert_range: bool = True) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.assert_range = assert_range

    def forward(self, x: Tensor, d: int) -> Tensor:
        # If the input is not within the configured range, the embedding might be ambiguous!
        in_range = torch.logical_and(
            self.lower <= x.abs(), torch.all(x.abs() <= self.upper)
        )
        # Allow zeros to pass through.
        in_range_or_zero = torch.all(torch.logical_or(in_range, x == 0))
        if self.assert_range and not in_range_or_zero:
            raise AssertionError(
                f'The input tensor is not within the configured range'
                f' `[{self.lower}, {self.upper}]`.'
            )

        # We will use half of the dimensionality for `sin` and the other half for `cos`.
        if not (d % 2 == 0):
            raise ValueError('The dimensionality must be a multiple of two.')

        # Always perform the expansion with `float64`s to avoid numerical accuracy shenanigans.
        x = x.double()

        wavelengths = torch.logspace(
            math.log10(self.lower),
            math.log10(self.upper),
            d // 2,
            base=10,
            device=x.device,
            dtype=x.dtype,
        )
        prod = torch.einsum('...i,j->...ij', x, 2 * np.pi / wavelengths)
        encoding = torch.cat((torch.sin(prod), torch.cos(prod)), dim=-1)

        return encoding.float()  # Cast to `float32` to avoid incompatibilities.


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return x + self.mlp(self.norm1(x))


class CopernicusFM(nn.Module):
    def __init__(self, img_size=4, patch_size=2, in_chans=3, embed_dim=8, depth=1):
        super().__init__()
        self.patch_embed = nn.Conv2d(in_chans, embed_dim, patch_size, stride=patch_size)
        self.num_patches = (img_size // patch_size) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(
            0.02 * torch.randn(1, self.num_patches + 1, embed_dim), requires_grad=False
        )
        self.coord_expansion = FourierExpansion(0.0001, 720)
        self.scale_expansion = FourierExpansion(0.001, 5.1e8)  # 1 m2 to 5.1e8 km2
        # 1 to 365.25 days, enable more than 1 year
        self.time_expansion = FourierExpansion(1, 365.25, assert_range=False)
        self.coord_fc = nn.Linear(embed_dim, embed_dim)
        self.scale_fc = nn.Linear(embed_dim, embed_dim)
        self.time_fc = nn.Linear(embed_dim, embed_dim)
        # if metadata is not available, set to a learned parameter
        self.coord_token = nn.Parameter(0.1 * torch.randn(1, 1, embed_dim))
        self.scale_token = nn.Parameter(0.1 * torch.randn(1, 1, embed_dim))
        self.time_token = nn.Parameter(0.1 * torch.randn(1, 1, embed_dim))
        self.blocks = nn.ModuleList([Block(embed_dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)
        self.global_pool = False

    def get_coord_pos_embed(self, lons: Tensor, lats: Tensor, embed_dim: int) -> Tensor:
        coord_embed_lon = self.coord_expansion(lons + 180, embed_dim // 2)
        coord_embed_lat = self.coord_expansion(lats + 90, embed_dim // 2)
        coord_embed = torch.cat([coord_embed_lon, coord_embed_lat], dim=-1)

        if coord_embed.shape[-1] < embed_dim:
            # pad zeros
            coord_embed = torch.cat(
                (
                    coord_embed,
                    torch.zeros(
                        coord_embed.shape[0],
                        embed_dim - coord_embed.shape[-1],
                        device=coord_embed.device,
                    ),
                ),
                dim=-1,
            )

        return coord_embed.unsqueeze(1)  # [B,1,D]

    def get_area_pos_embed(self, areas: Tensor, embed_dim: int) -> Tensor:
        scale_embed: Tensor = self.scale_expansion(areas, embed_dim)  # B, D
        scale_embed = scale_embed.unsqueeze(1)  # [B,1,D]
        return scale_embed

    def get_time_pos_embed(self, times: Tensor, embed_dim: int) -> Tensor:
        time_embed: Tensor = self.time_expansion(times, embed_dim)  # B, D
        time_embed = time_embed.unsqueeze(1)  # [B,1,D]
        return time_embed

    def forward_features(self, x: Tensor, metadata: Tensor) -> Tensor:
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        pos_embed = self.pos_embed

        # coord, scale and time pos embed
        lons, lats, times, areas = (
            metadata[:, 0],
            metadata[:, 1],
            metadata[:, 2],
            metadata[:, 3],
        )
        embed_dim = pos_embed.shape[-1]
        if torch.isnan(lons).any() or torch.isnan(lats).any():
            coord_embed: nn.Parameter | Tensor = self.coord_token
        else:
            coord_embed = self.get_coord_pos_embed(lons, lats, embed_dim)
        coord_embed = self.coord_fc(coord_embed)
        if torch.isnan(areas).any():
            area_embed: nn.Parameter | Tensor = self.scale_token
        else:
            area_embed = self.get_area_pos_embed(areas, embed_dim)
        area_embed = self.scale_fc(area_embed)
        if torch.isnan(times).any():
            time_embed: nn.Parameter | Tensor = self.time_token
        else:
            time_embed = self.get_time_pos_embed(times, embed_dim)
        time_embed = self.time_fc(time_embed)
        pos_embed = pos_embed + coord_embed + area_embed + time_embed

        # add pos embed w/o cls token
        x = x + pos_embed[:, 1:, :]

        # append cls token
        cls_token = self.cls_token + pos_embed[:, :1, :]
        cls_tokens = cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)

        # apply Transformer blocks
        for block in self.blocks:
            x = block(x)

        if self.global_pool:
            x = x[:, 1:, :].mean(dim=1)  # global pool without cls token
            outcome: Tensor = self.fc_norm(x)
        else:
            x = self.norm(x)
            outcome = x[:, 0]
        return outcome

    def forward(self, x: Tensor, metadata: Tensor) -> Tensor:
        return self.forward_features(x, metadata)


def make():
    torch.manual_seed(0)
    return CopernicusFM().eval()


NAN = float('nan')


def inputs():
    g = torch.Generator().manual_seed(4)
    metas = [
        [[12.5, 41.9, 120.0, 25.0], [-3.7, 40.4, 300.0, 100.0]],     # all known
        [[NAN, NAN, 90.0, 25.0], [10.0, 50.0, 91.0, 30.0]],          # unknown location
        [[5.0, 45.0, NAN, 2.5], [6.0, 46.0, 10.0, 2.5]],             # unknown time
        [[5.0, 45.0, 20.0, NAN]],                                    # unknown area
        [[NAN, NAN, NAN, NAN], [NAN, NAN, NAN, NAN]],                # nothing known
        [[-180.0, -90.0, 0.0, 0.0], [0.0, 0.0, 400.0, 1.0]],         # zeros pass the range check
        [[100.0, NAN, 365.0, 5e6], [20.0, 10.0, 1.0, 1e-3]],         # only a latitude missing
        [[170.0, 80.0, 2000.0, 0.5], [-170.0, -80.0, 5.0, 4e8]],     # time out of range: not checked
    ]
    out = []
    for m in metas:
        meta = torch.tensor(m)
        out.append((torch.randn(meta.shape[0], 3, 4, 4, generator=g), meta))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(9)
    return [
        (torch.randn(1, 3, 4, 4, generator=g), torch.tensor([[10.0, 20.0, 30.0, 1e-5]])),   # area too small
        (torch.randn(2, 3, 4, 4, generator=g), torch.tensor([[900.0, 0.0, 3.0, 1.0], [0.0, 0.0, 3.0, 1.0]])),  # lon
    ]
