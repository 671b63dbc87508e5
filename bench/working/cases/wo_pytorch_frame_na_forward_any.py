"""PyTorch Frame's stype encoders (the first stage of every `torch_frame.nn` tabular model, e.g.
FTTransformer, ResNet, ExcelFormer): before encoding a column group, `StypeEncoder.na_forward`
imputes missing values column by column (NaN for numerical columns, -1 for categorical ones) with
the column mean, zero or the most frequent category, skipping columns that have nothing missing.

Source: https://github.com/pyg-team/pytorch-frame/issues/452 ("Address `torch.compile` graph breaks
in models": "models in `torch_frame.nn` have a number of graph breaks ... the goal is to address as
many graph breaks as possible in this test case"), with the graph-break test of
https://github.com/pyg-team/pytorch-frame/pull/119 ("Test graph breaks for better performance with
`torch.compile`"); code of that time at
https://github.com/pyg-team/pytorch-frame/blob/master/torch_frame/nn/encoder/stype_encoder.py
(`StypeEncoder.forward`, `na_forward`, `post_forward`, `EmbeddingEncoder`, `LinearEncoder`).
Reduced: the lazy-initialisation base `torch_frame.nn.base.Module` is replaced by direct
construction from `stats_list`; the `stype`, `NAStrategy` and `StatType` enums keep only the members
used; the stype-wise wrapper is a two-encoder module that concatenates the numerical and categorical
column embeddings like `StypeWiseFeatureEncoder`; 3 numerical and 2 categorical columns, 4 channels.

Breaks: `if not nan_mask.any():` inside the Python loop over columns (data-dependent branch, hit
once per column).

HAND: each column is filled with `torch.where(nan_mask, fill_value, column_data)` copied back into
the column (the same values whether or not the column has missing entries, and the same zero
gradient at imputed entries), so the `.any()` test is not needed; the site is removed.
"""
import enum
from typing import Any, Dict, List, Optional

import torch
from torch import Tensor
from torch.nn import Embedding, Module, ModuleList, Parameter

KIND = "any-branch-loop"
GRAD = True


class stype(enum.Enum):
    numerical = 'numerical'
    categorical = 'categorical'


class NAStrategy(enum.Enum):
    MEAN = 'mean'
    MOST_FREQUENT = 'most_frequent'
    ZEROS = 'zeros'


class StatType(enum.Enum):
    MEAN = 'MEAN'
    STD = 'STD'
    COUNT = 'COUNT'


class StypeEncoder(Module):
    def __init__(self, out_channels: int, stats_list: List[Dict[StatType, Any]], stype: stype,
                 post_module: Optional[Module] = None, na_strategy: Optional[NAStrategy] = None):
        super().__init__()
        self.out_channels = out_channels
        self.stats_list = stats_list
        self.stype = stype
        self.post_module = post_module
        self.na_strategy = na_strategy

    def forward(self, feat: Tensor) -> Tensor:
        # Clone the tensor to avoid in-place modification
        feat = feat.clone()
        # NaN handling of the input Tensor
        feat = self.na_forward(feat)
        # Main encoding into column embeddings
        x = self.encode_forward(feat)
        # Handle NaN in case na_strategy is None
        x = torch.nan_to_num(x, nan=0)
        # Post-forward (e.g., normalization, activation)
        return self.post_forward(x)

    def post_forward(self, out: Tensor) -> Tensor:
        if self.post_module is not None:
            shape_before = out.shape
            out = self.post_module(out)
            if out.shape != shape_before:
                raise RuntimeError(
                    f"post_module must not alter the shape of the tensor, but "
                    f"it changed the shape from {shape_before} to "
                    f"{out.shape}.")
        return out

    def na_forward(self, feat: Tensor) -> Tensor:
        r"""Replace NaN values in input :obj:`Tensor` given :obj:`na_strategy`."""
        if self.na_strategy is None:
            return feat

        for col in range(feat.size(1)):
            column_data = feat[:, col]
            if self.stype == stype.numerical:
                nan_mask = torch.isnan(column_data)
            else:
                nan_mask = (column_data == -1)
            if not nan_mask.any():
                continue
            if self.na_strategy == NAStrategy.MOST_FREQUENT:
                # Categorical index is sorted based on count,
                # so 0-th index is always the most frequent.
                fill_value = 0
            elif self.na_strategy == NAStrategy.MEAN:
                fill_value = self.stats_list[col][StatType.MEAN]
            elif self.na_strategy == NAStrategy.ZEROS:
                fill_value = 0
            else:
                raise ValueError(f"Unsupported NA strategy {self.na_strategy}")
            column_data[nan_mask] = fill_value
        return feat


class EmbeddingEncoder(StypeEncoder):
    def __init__(self, out_channels, stats_list, stype, post_module=None, na_strategy=None):
        super().__init__(out_channels, stats_list, stype, post_module, na_strategy)
        self.embs = ModuleList([])
        for stats in self.stats_list:
            num_categories = len(stats[StatType.COUNT][0])
            # 0-th category is for NaN.
            self.embs.append(
                Embedding(
                    num_categories + 1,
                    self.out_channels,
                    padding_idx=0,
                ))

    def encode_forward(self, feat: Tensor) -> Tensor:
        # Increment the index by one so that NaN index (-1) becomes 0
        # (padding_idx)
        # feat: [batch_size, num_cols]
        feat = feat + 1
        xs = []
        for i, emb in enumerate(self.embs):
            xs.append(emb(feat[:, i]))
        # [batch_size, num_cols, hidden_channels]
        x = torch.stack(xs, dim=1)
        return x


class LinearEncoder(StypeEncoder):
    def __init__(self, out_channels, stats_list, stype, post_module=None, na_strategy=None):
        super().__init__(out_channels, stats_list, stype, post_module, na_strategy)
        mean = torch.tensor(
            [stats[StatType.MEAN] for stats in self.stats_list])
        self.register_buffer('mean', mean)
        std = torch.tensor([stats[StatType.STD]
                            for stats in self.stats_list]) + 1e-6
        self.register_buffer('std', std)
        num_cols = len(self.stats_list)
        self.weight = Parameter(torch.empty(num_cols, self.out_channels))
        self.bias = Parameter(torch.empty(num_cols, self.out_channels))
        torch.nn.init.normal_(self.weight, std=0.01)
        torch.nn.init.normal_(self.bias, std=0.01)

    def encode_forward(self, feat: Tensor) -> Tensor:
        # feat: [batch_size, num_cols]
        feat = (feat - self.mean) / self.std
        # [batch_size, num_cols], [channels, num_cols]
        # -> [batch_size, num_cols, channels]
        x_lin = torch.einsum('ij,jk->ijk', feat, self.weight)
        # [batch_size, num_cols, channels] + [num_cols, channels]
        # -> [batch_size, num_cols, channels]
        x = x_lin + self.bias
        return x


class StypeWiseFeatureEncoder(Module):
    def __init__(self, num_encoder: StypeEncoder, cat_encoder: StypeEncoder):
        super().__init__()
        self.num_encoder = num_encoder
        self.cat_encoder = cat_encoder

    def forward(self, x_num: Tensor, x_cat: Tensor) -> Tensor:
        xs = [self.num_encoder(x_num), self.cat_encoder(x_cat)]
        return torch.cat(xs, dim=1)


NUM_STATS = [
    {StatType.MEAN: 0.5, StatType.STD: 2.0},
    {StatType.MEAN: -1.25, StatType.STD: 0.5},
    {StatType.MEAN: 3.0, StatType.STD: 1.0},
]
CAT_STATS = [
    {StatType.COUNT: (['a', 'b', 'c'], [5, 3, 1])},
    {StatType.COUNT: (['x', 'y'], [4, 2])},
]


def make():
    torch.manual_seed(0)
    return StypeWiseFeatureEncoder(
        LinearEncoder(4, NUM_STATS, stype.numerical, post_module=torch.nn.ReLU(), na_strategy=NAStrategy.MEAN),
        EmbeddingEncoder(4, CAT_STATS, stype.categorical, na_strategy=NAStrategy.MOST_FREQUENT),
    )


def inputs():
    g = torch.Generator().manual_seed(2)
    nan = float('nan')

    def num(b, holes=()):
        x = torch.randn(b, 3, generator=g)
        for r, c in holes:
            x[r, c] = nan
        return x

    def cat(b, holes=()):
        x = torch.stack([torch.randint(0, 3, (b,), generator=g), torch.randint(0, 2, (b,), generator=g)], 1)
        for r, c in holes:
            x[r, c] = -1
        return x

    return [
        (num(4), cat(4)),                                          # nothing missing
        (num(4, [(1, 0)]), cat(4)),                                # one numerical NaN
        (num(3), cat(3, [(0, 1), (2, 1)])),                        # missing categories
        (num(5, [(0, 0), (0, 1), (0, 2)]), cat(5, [(4, 0)])),      # a fully missing row
        (num(2, [(0, 2), (1, 2)]), cat(2, [(0, 0), (1, 0), (0, 1), (1, 1)])),  # whole columns missing
        (num(1), cat(1)),
        (num(6, [(3, 1), (5, 1)]), cat(6)),
        (num(3, [(2, 0)]), cat(3, [(1, 0)])),
    ]
