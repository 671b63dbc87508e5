"""TorchRec's EmbeddingBagCollection over a KeyedJaggedTensor: `features.to_dict()` splits the flat
`values` into one jagged tensor per feature using `length_per_key`, computed from the lengths with
`.cpu().tolist()`, then each feature's bags are pooled with its table's nn.EmbeddingBag.

Source: https://github.com/pytorch/torchrec/blob/main/torchrec/modules/embedding_modules.py
        (EmbeddingBagCollection.forward) and
        https://github.com/pytorch/torchrec/blob/main/torchrec/sparse/jagged_tensor.py
        (KeyedJaggedTensor, _maybe_compute_stride_kjt, _maybe_compute_length_per_key,
        _maybe_compute_kjt_to_jt_dict, JaggedTensor; the torchrec 0.2-0.4 versions).
Reduced: `_to_offsets` is a torch cumsum instead of fbgemm's asynchronous_complete_cumsum; no
inverse indices, no FP16 tables; KeyedTensor is reduced to its concatenated values; a linear "over
arch" on top as in a DLRM-style model.

Breaks: `torch.sum(lengths.view(-1, stride), dim=1).cpu().tolist()` in
`_maybe_compute_length_per_key` (a data-dependent Python list), used as the split sizes of
`torch.split(values, length_per_key)`.

HAND: no per-feature split of `values`: each table pools all bags of the batch from the whole
`values` tensor with the global offsets (indices clamped into the table, `per_sample_weights` kept),
and keeps its own feature's B bags — the same bags, summed/averaged in the same order, and the
other bags (discarded) pass zero gradient.
"""
from typing import Dict, List, Optional

import torch
from torch import nn


def _to_offsets(lengths: torch.Tensor) -> torch.Tensor:
    return torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, dim=0)])


class JaggedTensor:
    def __init__(self, values, weights=None, lengths=None, offsets=None):
        self._values = values
        self._weights = weights
        self._lengths = lengths
        self._offsets = offsets

    def values(self):
        return self._values

    def weights(self):
        assert self._weights is not None, "This JaggedTensor doesn't have weights."
        return self._weights

    def lengths(self):
        return self._lengths

    def offsets(self):
        return self._offsets


def _maybe_compute_stride_kjt(keys, stride, lengths, offsets):
    if stride is None:
        if len(keys) == 0:
            stride = 0
        elif offsets is not None:
            stride = (offsets.numel() - 1) // len(keys)
        elif lengths is not None:
            stride = lengths.numel() // len(keys)
        else:
            stride = 1
    return stride


def _maybe_compute_length_per_key(
    keys: List[str],
    stride: int,
    length_per_key: Optional[List[int]],
    lengths: Optional[torch.Tensor],
    offsets: Optional[torch.Tensor],
) -> List[int]:
    if length_per_key is None:
        if len(keys) and offsets is not None:
            _length: List[int] = (
                torch.sum((offsets[1:] - offsets[:-1]).view(-1, stride), dim=1)
                .cpu()
                .tolist()
            )
        elif len(keys) and lengths is not None:
            _length: List[int] = (
                torch.sum(lengths.view(-1, stride), dim=1).cpu().tolist()
            )
        else:
            _length: List[int] = []
        length_per_key = _length
    return length_per_key


def _maybe_compute_kjt_to_jt_dict(
    stride: int,
    keys: List[str],
    length_per_key: List[int],
    values: torch.Tensor,
    lengths: torch.Tensor,
    weights: Optional[torch.Tensor],
    jt_dict: Optional[Dict[str, JaggedTensor]],
) -> Dict[str, JaggedTensor]:
    if jt_dict is None:
        _jt_dict: Dict[str, JaggedTensor] = {}
        values_list = torch.split(values, length_per_key)
        lengths_tuple = torch.unbind(lengths.view(-1, stride), dim=0)
        if weights is not None:
            weights_list = torch.split(weights, length_per_key)
            for idx, key in enumerate(keys):
                length = lengths_tuple[idx]
                offset = _to_offsets(length)
                _jt_dict[key] = JaggedTensor(
                    lengths=length,
                    offsets=offset,
                    values=values_list[idx],
                    weights=weights_list[idx],
                )
        else:
            for idx, key in enumerate(keys):
                length = lengths_tuple[idx]
                offset = _to_offsets(length)
                _jt_dict[key] = JaggedTensor(
                    lengths=length,
                    offsets=offset,
                    values=values_list[idx],
                )
        jt_dict = _jt_dict
    return jt_dict


class KeyedJaggedTensor:
    """Represents an (optionally weighted) keyed jagged tensor [F X B X L]."""

    def __init__(self, keys, values, weights=None, lengths=None, offsets=None, stride=None,
                 length_per_key=None):
        self._keys = keys
        self._values = values
        self._weights = weights
        self._lengths = lengths
        self._offsets = offsets
        self._stride = _maybe_compute_stride_kjt(keys, stride, lengths, offsets)
        self._length_per_key = length_per_key
        self._jt_dict = None

    def keys(self):
        return self._keys

    def values(self):
        return self._values

    def weights_or_none(self):
        return self._weights

    def lengths(self):
        return self._lengths

    def stride(self):
        return self._stride

    def length_per_key(self) -> List[int]:
        _length_per_key = _maybe_compute_length_per_key(
            keys=self._keys,
            stride=self.stride(),
            length_per_key=self._length_per_key,
            lengths=self._lengths,
            offsets=self._offsets,
        )
        self._length_per_key = _length_per_key
        return _length_per_key

    def to_dict(self) -> Dict[str, JaggedTensor]:
        _jt_dict = _maybe_compute_kjt_to_jt_dict(
            stride=self.stride(),
            keys=self.keys(),
            length_per_key=self.length_per_key(),
            values=self.values(),
            lengths=self.lengths(),
            weights=self.weights_or_none(),
            jt_dict=self._jt_dict,
        )
        self._jt_dict = _jt_dict
        return _jt_dict


class EmbeddingBagCollection(nn.Module):
    def __init__(self, tables, is_weighted=False):
        super().__init__()
        self._is_weighted = is_weighted
        self.embedding_bags: nn.ModuleDict = nn.ModuleDict()
        self._lengths_per_embedding: List[int] = []
        for name, num_embeddings, embedding_dim, mode, feature_names in tables:
            self.embedding_bags[name] = nn.EmbeddingBag(
                num_embeddings=num_embeddings,
                embedding_dim=embedding_dim,
                mode=mode,
                include_last_offset=True,
            )
            self._lengths_per_embedding.extend(len(feature_names) * [embedding_dim])
        self._feature_names: List[List[str]] = [t[4] for t in tables]

    def forward(self, features: KeyedJaggedTensor) -> torch.Tensor:
        pooled_embeddings: List[torch.Tensor] = []
        # No per-feature split (that needs `length_per_key` on the host): every table pools all
        # F x B bags from the whole `values` with the global offsets, and keeps its feature's bags.
        keys = features.keys()
        stride = features.stride()
        values = features.values()
        offsets = _to_offsets(features.lengths())
        weights = features.weights_or_none()
        for i, embedding_bag in enumerate(self.embedding_bags.values()):
            # indices of other features may lie outside this table; their bags are discarded
            table_values = values.clamp(max=embedding_bag.num_embeddings - 1)
            all_bags = embedding_bag(
                input=table_values,
                offsets=offsets,
                per_sample_weights=weights if self._is_weighted else None,
            ).float()
            for feature_name in self._feature_names[i]:
                k = keys.index(feature_name)
                pooled_embeddings.append(all_bags[k * stride:(k + 1) * stride])
        # KeyedTensor(keys=..., values=torch.cat(pooled_embeddings, dim=1), length_per_key=...)
        return torch.cat(pooled_embeddings, dim=1)


class SparseArch(nn.Module):
    """KJT built from the batch's flat ids/lengths (KeyedJaggedTensor.from_lengths_sync), pooled
    embeddings, then a linear over-arch."""

    KEYS = ["user_hist", "item_tags", "item_cat"]

    def __init__(self, is_weighted=False):
        super().__init__()
        self.ebc = EmbeddingBagCollection(
            [("t_hist", 20, 4, "sum", ["user_hist"]),
             # per_sample_weights need "sum" pooling
             ("t_tags", 12, 4, "sum" if is_weighted else "mean", ["item_tags", "item_cat"])],
            is_weighted=is_weighted,
        )
        self.over = nn.Linear(12, 1)
        self.is_weighted = is_weighted

    def forward(self, values, lengths, weights=None):
        kjt = KeyedJaggedTensor(keys=self.KEYS, values=values, lengths=lengths,
                                weights=weights if self.is_weighted else None)
        return self.over(self.ebc(kjt))


class WeightedOrNot(nn.Module):
    def __init__(self):
        super().__init__()
        self.plain = SparseArch(is_weighted=False)
        self.weighted = SparseArch(is_weighted=True)

    def forward(self, values, lengths, weights=None):
        if weights is None:
            return self.plain(values, lengths)
        return self.weighted(values, lengths, weights)


def make():
    torch.manual_seed(0)
    return WeightedOrNot()


def _batch(g, B, max_len, weighted):
    lengths = torch.randint(0, max_len + 1, (3 * B,), generator=g)
    highs = [20, 12, 12]
    vals = []
    for k in range(3):
        n = int(lengths[k * B:(k + 1) * B].sum())
        vals.append(torch.randint(0, highs[k], (n,), generator=g))
    values = torch.cat(vals)
    if weighted:
        return values, lengths, torch.rand(values.numel(), generator=g)
    return values, lengths


def inputs():
    g = torch.Generator().manual_seed(0)
    out = [_batch(g, B, L, w) for B, L, w in [(2, 3, False), (3, 2, False), (1, 4, False), (4, 1, False),
                                              (2, 3, True), (3, 4, True), (2, 2, True)]]
    # a feature with no ids at all in the batch, and one bag empty in every feature
    out.append((torch.tensor([3, 17, 5, 5, 2]), torch.tensor([2, 0, 0, 0, 1, 2])))
    out.append((torch.tensor([1, 2, 3]), torch.tensor([0, 1, 1, 0, 1, 0]), torch.tensor([0.5, 2.0, 1.0])))
    return out


KIND = "tolist"
GRAD = True
