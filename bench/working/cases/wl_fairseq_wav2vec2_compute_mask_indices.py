"""fairseq's wav2vec 2.0 pre-training forward with span masking: `Wav2Vec2Model.apply_mask` draws the
time-step spans (and channel spans) to replace with the learned `mask_emb` with
`compute_mask_indices`, a NumPy routine driven by NumPy's global RNG that reads each sequence's
unpadded length back with `padding_mask[i].long().sum().item()`; the forward then gathers the
unmasked features at the masked positions as the contrastive targets
(`unmasked_features[mask_indices].view(B, -1, C)`).

Source: https://github.com/facebookresearch/fairseq/blob/003179f31ecdf7c667ed1fd0b751f1c6e9a71134/fairseq/data/data_utils.py
(`compute_mask_indices`) and fairseq/models/wav2vec/wav2vec2.py of the same release
(https://github.com/facebookresearch/fairseq/blob/main/fairseq/models/wav2vec/wav2vec2.py:
`Wav2Vec2Model.apply_mask` and the masking part of `Wav2Vec2Model.forward`). Reduced: the conv
feature extractor, quantizer and transformer are a LayerNorm + Linear projection before the
masking and one Linear after it; the `no_overlap` branch (which uses the removed `np.int`) is not
configured. Tiny shapes: batch 1-3, 10-12 frames, 6 channels; mask_prob 0.65, mask_length 2,
channel mask prob 0.3.

Breaks: dynamo traces the NumPy code as tensors, and breaks at `+ np.random.rand()` (NumPy's
global random stream is not traced: data-dependent operator), at
`sz = all_sz - padding_mask[i].long().sum().item()` (`.item()` in the loop over the batch, when a
padding mask is given), at `if sum(lengths) == 0:` (a branch on the traced array) and at
`for offset in range(lengths[j])` (`range` of a traced array element), the last three in loops
(frame skipped); in the forward, `unmasked_features[mask_indices]` (boolean-mask selection).

HAND: none — the mask positions are drawn from NumPy's global RNG with data-dependent counts
(`np.random.choice` without replacement, `np.unique`, an equalising subsample per row); any
traceable rewrite (torch RNG, fixed-size sampling) draws different positions, so the masked frames,
the outputs and the gradients would change; and the gathered targets `y` have a size fixed by that
host-side draw.
"""
from typing import Optional, Tuple

import numpy as np
import torch
import torch.nn as nn

KIND = "numpy-rng+item+mask"
GRAD = True


def compute_mask_indices(
        shape: Tuple[int, int],
        padding_mask: Optional[torch.Tensor],
        mask_prob: float,
        mask_length: int,
        mask_type: str = "static",
        mask_other: float = 0.0,
        min_masks: int = 0,
        no_overlap: bool = False,
        min_space: int = 0,
) -> np.ndarray:
    """
    Computes random mask spans for a given shape

    Args:
        shape: the the shape for which to compute masks.
            should be of size 2 where first element is batch size and 2nd is timesteps
        padding_mask: optional padding mask of the same size as shape, which will prevent masking padded elements
        mask_prob: probability for each token to be chosen as start of the span to be masked. this will be multiplied by
            number of timesteps divided by length of mask span to mask approximately this percentage of all elements.
            however due to overlaps, the actual number will be smaller (unless no_overlap is True)
        mask_type: how to compute mask lengths
            static = fixed size
            uniform = sample from uniform distribution [mask_other, mask_length*2]
            normal = sample from normal distribution with mean mask_length and stdev mask_other. mask is min 1 element
            poisson = sample from possion distribution with lambda = mask length
        min_masks: minimum number of masked spans
        no_overlap: if false, will switch to an alternative recursive algorithm that prevents spans from overlapping
        min_space: only used if no_overlap is True, this is how many elements to keep unmasked between spans
    """

    bsz, all_sz = shape
    mask = np.full((bsz, all_sz), False)

    all_num_mask = int(
        # add a random number for probabilistic rounding
        mask_prob * all_sz / float(mask_length)
        + np.random.rand()
    )

    all_num_mask = max(min_masks, all_num_mask)

    mask_idcs = []
    for i in range(bsz):
        if padding_mask is not None:
            sz = all_sz - padding_mask[i].long().sum().item()
            num_mask = int(
                # add a random number for probabilistic rounding
                mask_prob * sz / float(mask_length)
                + np.random.rand()
            )
            num_mask = max(min_masks, num_mask)
        else:
            sz = all_sz
            num_mask = all_num_mask

        if mask_type == "static":
            lengths = np.full(num_mask, mask_length)
        elif mask_type == "uniform":
            lengths = np.random.randint(mask_other, mask_length * 2 + 1, size=num_mask)
        elif mask_type == "normal":
            lengths = np.random.normal(mask_length, mask_other, size=num_mask)
            lengths = [max(1, int(round(x))) for x in lengths]
        elif mask_type == "poisson":
            lengths = np.random.poisson(mask_length, size=num_mask)
            lengths = [int(round(x)) for x in lengths]
        else:
            raise Exception("unknown mask selection " + mask_type)

        if sum(lengths) == 0:
            lengths[0] = min(mask_length, sz - 1)

        if no_overlap:
            mask_idc = []
            def arrange(s, e, length, keep_length):
                span_start = np.random.randint(s, e-length)
                mask_idc.extend(span_start + i for i in range(length))

                new_parts = []
                if span_start - s - min_space >= keep_length:
                    new_parts.append((s, span_start-min_space+1))
                if e - span_start - keep_length - min_space > keep_length:
                    new_parts.append((span_start + length + min_space, e))
                return new_parts

            parts = [(0, sz)]
            min_length = min(lengths)
            for length in sorted(lengths, reverse=True):
                lens = np.fromiter((e - s if e-s >= length+min_space else 0 for s, e in parts), np.int)
                l_sum = np.sum(lens)
                if l_sum == 0:
                    break
                probs = lens / np.sum(lens)
                c = np.random.choice(len(parts), p=probs)
                s, e = parts.pop(c)
                parts.extend(arrange(s, e, length, min_length))
            mask_idc = np.asarray(mask_idc)
        else:
            min_len = min(lengths)
            if sz - min_len <= num_mask:
                min_len  = sz - num_mask - 1

            mask_idc = np.random.choice(sz - min_len, num_mask, replace=False)

            mask_idc = np.asarray(
                [
                    mask_idc[j] + offset
                    for j in range(len(mask_idc))
                    for offset in range(lengths[j])
                ]
            )

        mask_idcs.append(np.unique(mask_idc[mask_idc < sz]))

    min_len = min([len(m) for m in mask_idcs])
    for i, mask_idc in enumerate(mask_idcs):
        if len(mask_idc) > min_len:
            mask_idc = np.random.choice(mask_idc, min_len, replace=False)
        mask[i, mask_idc] = True

    return mask


class Wav2Vec2Masking(nn.Module):
    """The masking part of fairseq's `Wav2Vec2Model` (its config fields and forward around
    `apply_mask`); the feature extractor and the transformer are one projection each."""

    def __init__(self, embed=6, encoder_embed_dim=6, mask_prob=0.65, mask_length=10, mask_selection="static",
                 mask_other=0.0, no_mask_overlap=False, mask_min_space=1, mask_channel_prob=0.0,
                 mask_channel_length=10, mask_channel_selection="static", mask_channel_other=0.0,
                 no_mask_channel_overlap=False, mask_channel_min_space=1, dropout_input=0.1):
        super().__init__()
        self.mask_prob = mask_prob
        self.mask_selection = mask_selection
        self.mask_other = mask_other
        self.mask_length = mask_length
        self.no_mask_overlap = no_mask_overlap
        self.mask_min_space = mask_min_space

        self.mask_channel_prob = mask_channel_prob
        self.mask_channel_selection = mask_channel_selection
        self.mask_channel_other = mask_channel_other
        self.mask_channel_length = mask_channel_length
        self.no_mask_channel_overlap = no_mask_channel_overlap
        self.mask_channel_min_space = mask_channel_min_space

        self.layer_norm = nn.LayerNorm(embed)
        self.post_extract_proj = nn.Linear(embed, encoder_embed_dim)
        self.dropout_input = nn.Dropout(dropout_input)
        self.mask_emb = nn.Parameter(torch.FloatTensor(encoder_embed_dim).uniform_())
        self.encoder = nn.Linear(encoder_embed_dim, encoder_embed_dim)

    def apply_mask(self, x, padding_mask):
        B, T, C = x.shape
        if self.mask_prob > 0:
            mask_indices = compute_mask_indices(
                (B, T),
                padding_mask,
                self.mask_prob,
                self.mask_length,
                self.mask_selection,
                self.mask_other,
                min_masks=2,
                no_overlap=self.no_mask_overlap,
                min_space=self.mask_min_space,
            )
            mask_indices = torch.from_numpy(mask_indices).to(x.device)
            x[mask_indices] = self.mask_emb
        else:
            mask_indices = None

        if self.mask_channel_prob > 0:
            mask_channel_indices = compute_mask_indices(
                (B, C),
                None,
                self.mask_channel_prob,
                self.mask_channel_length,
                self.mask_channel_selection,
                self.mask_channel_other,
                no_overlap=self.no_mask_channel_overlap,
                min_space=self.mask_channel_min_space,
            )
            mask_channel_indices = (
                torch.from_numpy(mask_channel_indices)
                .to(x.device)
                .unsqueeze(1)
                .expand(-1, T, -1)
            )
            x[mask_channel_indices] = 0

        return x, mask_indices

    def forward(self, features, padding_mask=None, mask=True):
        features = self.layer_norm(features)
        unmasked_features = features.clone()

        if self.post_extract_proj is not None:
            features = self.post_extract_proj(features)

        features = self.dropout_input(features)

        if mask:
            x, mask_indices = self.apply_mask(features, padding_mask)
            if mask_indices is not None:
                y = unmasked_features[mask_indices].view(unmasked_features.size(0), -1, unmasked_features.size(-1))
            else:
                y = unmasked_features
        else:
            x = features
            y = unmasked_features
            mask_indices = None

        x = self.encoder(x)
        return {"x": x, "y": y, "padding_mask": padding_mask}


def make():
    torch.manual_seed(0)
    return Wav2Vec2Masking(mask_prob=0.65, mask_length=2, mask_channel_prob=0.3, mask_channel_length=2).train()


def _padding(lengths, t):
    return torch.arange(t)[None, :] >= torch.tensor(lengths)[:, None]


def inputs():
    g = torch.Generator().manual_seed(1)
    f = lambda b, t: torch.randn(b, t, 6, generator=g)
    return [
        (f(2, 10), None),
        (f(2, 10), _padding([10, 7], 10)),
        (f(1, 12), None),
        (f(3, 12), _padding([12, 9, 11], 12)),
        (f(1, 10), _padding([8], 10)),
        (f(2, 12), None, False),
        (f(3, 10), _padding([10, 10, 10], 10)),
        (f(2, 11), _padding([9, 11], 11)),
    ]
