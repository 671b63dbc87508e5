"""Hugging Face Wav2Vec2 in training mode with SpecAugment: `_mask_hidden_states` draws time and
feature masks with `_compute_mask_indices`, a NumPy function (`np.random.rand`,
`np.random.choice(..., replace=False)`, `np.put_along_axis`) that takes the per-example lengths
from `attention_mask.detach().sum(-1).tolist()`, turns the NumPy mask into a tensor and writes the
learned `masked_spec_embed` (time) or zeros (features) into the masked positions.

Source: https://github.com/huggingface/transformers/issues/22849 ("Fine-tuning wav2vec 2.0 with
`torch.compile`": "the issue seems to reside with the `_compute_mask_indices` function ... The
function is both dynamic and in NumPy"; the torch port in
https://github.com/huggingface/transformers/pull/24668 was not merged), code at
https://github.com/huggingface/transformers/blob/main/src/transformers/models/wav2vec2/modeling_wav2vec2.py
(`_compute_mask_indices`, `Wav2Vec2Model._mask_hidden_states`, `Wav2Vec2FeatureProjection`).
Reduced: the convolutional feature encoder is skipped (the forward takes the extracted features
and a feature-level attention mask), the transformer encoder is one LayerNorm + feed-forward block;
mask_time_prob=0.3, mask_time_length=2, mask_feature_prob=0.25, mask_feature_length=2, no
dropout. The harness seeds NumPy before every call, so the eager masks are reproducible.

Breaks: in `_compute_mask_indices`: `np.random.rand(1).item()`,
`attention_mask.detach().sum(-1).tolist()` and `np.random.choice(...)` inside the per-example loop
(the frame is then skipped). Dynamo traces NumPy through torch, so under torch.compile the draws
come from torch's generator (`use_numpy_random_stream` is off) and the masks differ from eager,
as in the source.

HAND: none — the masks are drawn from NumPy's global random stream (`np.random.rand`,
`np.random.choice` without replacement) with a per-example number of spans read on the host; no
graph op reproduces those draws, and a torch port (as attempted upstream) changes which positions
are masked.
"""
from typing import Optional, Tuple

import numpy as np
import torch
import torch.nn as nn

KIND = "numpy-random-tolist"


def _compute_mask_indices(
    shape: Tuple[int, int],
    mask_prob: float,
    mask_length: int,
    attention_mask: Optional[torch.LongTensor] = None,
    min_masks: int = 0,
) -> np.ndarray:
    batch_size, sequence_length = shape

    if mask_length < 1:
        raise ValueError("`mask_length` has to be bigger than 0.")

    if mask_length > sequence_length:
        raise ValueError(
            f"`mask_length` has to be smaller than `sequence_length`, but got `mask_length`: {mask_length}"
            f" and `sequence_length`: {sequence_length}`"
        )

    # epsilon is used for probabilistic rounding
    epsilon = np.random.rand(1).item()

    def compute_num_masked_span(input_length):
        """Given input length, compute how many spans should be masked"""
        num_masked_span = int(mask_prob * input_length / mask_length + epsilon)
        num_masked_span = max(num_masked_span, min_masks)

        # make sure num masked span <= sequence_length
        if num_masked_span * mask_length > sequence_length:
            num_masked_span = sequence_length // mask_length

        # make sure num_masked span is also <= input_length - (mask_length - 1)
        if input_length - (mask_length - 1) < num_masked_span:
            num_masked_span = max(input_length - (mask_length - 1), 0)

        return num_masked_span

    # compute number of masked spans in batch
    input_lengths = (
        attention_mask.detach().sum(-1).tolist()
        if attention_mask is not None
        else [sequence_length for _ in range(batch_size)]
    )

    # SpecAugment mask to fill
    spec_aug_mask = np.zeros((batch_size, sequence_length), dtype=bool)
    spec_aug_mask_idxs = []

    max_num_masked_span = compute_num_masked_span(sequence_length)

    if max_num_masked_span == 0:
        return spec_aug_mask

    for input_length in input_lengths:
        # compute num of masked spans for this input
        num_masked_span = compute_num_masked_span(input_length)

        # get random indices to mask
        spec_aug_mask_idx = np.random.choice(
            np.arange(input_length - (mask_length - 1)), num_masked_span, replace=False
        )

        # pick first sampled index that will serve as a dummy index to pad vector
        # to ensure same dimension for all batches due to probabilistic rounding
        # Picking first sample just pads those vectors twice.
        if len(spec_aug_mask_idx) == 0:
            # this case can only happen if `input_length` is strictly smaller then
            # `sequence_length` in which case the last token has to be a padding
            # token which we can use as a dummy mask id
            dummy_mask_idx = sequence_length - 1
        else:
            dummy_mask_idx = spec_aug_mask_idx[0]

        spec_aug_mask_idx = np.concatenate(
            [spec_aug_mask_idx, np.ones(max_num_masked_span - num_masked_span, dtype=np.int32) * dummy_mask_idx]
        )
        spec_aug_mask_idxs.append(spec_aug_mask_idx)

    spec_aug_mask_idxs = np.array(spec_aug_mask_idxs)

    # expand masked indices to masked spans
    spec_aug_mask_idxs = np.broadcast_to(
        spec_aug_mask_idxs[:, :, None], (batch_size, max_num_masked_span, mask_length)
    )
    spec_aug_mask_idxs = spec_aug_mask_idxs.reshape(batch_size, max_num_masked_span * mask_length)

    # add offset to the starting indexes so that indexes now create a span
    offsets = np.arange(mask_length)[None, None, :]
    offsets = np.broadcast_to(offsets, (batch_size, max_num_masked_span, mask_length)).reshape(
        batch_size, max_num_masked_span * mask_length
    )
    spec_aug_mask_idxs = spec_aug_mask_idxs + offsets

    # ensure that we cannot have indices larger than sequence_length
    if spec_aug_mask_idxs.max() > sequence_length - 1:
        spec_aug_mask_idxs[spec_aug_mask_idxs > sequence_length - 1] = sequence_length - 1

    # scatter indices to mask
    np.put_along_axis(spec_aug_mask, spec_aug_mask_idxs, 1, -1)

    return spec_aug_mask


class Wav2Vec2Config:
    conv_dim_last = 6
    hidden_size = 8
    intermediate_size = 16
    layer_norm_eps = 1e-5
    apply_spec_augment = True
    mask_time_prob = 0.3
    mask_time_length = 2
    mask_time_min_masks = 2
    mask_feature_prob = 0.25
    mask_feature_length = 2
    mask_feature_min_masks = 0


class Wav2Vec2FeatureProjection(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer_norm = nn.LayerNorm(config.conv_dim_last, eps=config.layer_norm_eps)
        self.projection = nn.Linear(config.conv_dim_last, config.hidden_size)
        self.dropout = nn.Dropout(0.0)

    def forward(self, hidden_states):
        # non-projected hidden states are needed for quantization
        norm_hidden_states = self.layer_norm(hidden_states)
        hidden_states = self.projection(norm_hidden_states)
        hidden_states = self.dropout(hidden_states)
        return hidden_states, norm_hidden_states


class Wav2Vec2Model(nn.Module):
    def __init__(self, config: Wav2Vec2Config):
        super().__init__()
        self.config = config
        self.feature_projection = Wav2Vec2FeatureProjection(config)
        # model only needs masking vector if mask prob is > 0.0
        if config.mask_time_prob > 0.0 or config.mask_feature_prob > 0.0:
            self.masked_spec_embed = nn.Parameter(torch.Tensor(config.hidden_size).uniform_())
        self.encoder_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.encoder_ffn = nn.Sequential(
            nn.Linear(config.hidden_size, config.intermediate_size),
            nn.GELU(),
            nn.Linear(config.intermediate_size, config.hidden_size),
        )

    def _mask_hidden_states(
        self,
        hidden_states: torch.FloatTensor,
        mask_time_indices: Optional[torch.FloatTensor] = None,
        attention_mask: Optional[torch.LongTensor] = None,
    ):
        """
        Masks extracted features along time axis and/or along feature axis according to
        [SpecAugment](https://huggingface.co/papers/1904.08779).
        """

        # `config.apply_spec_augment` can set masking to False
        if not getattr(self.config, "apply_spec_augment", True):
            return hidden_states

        # generate indices & apply SpecAugment along time axis
        batch_size, sequence_length, hidden_size = hidden_states.size()

        if mask_time_indices is not None:
            # apply SpecAugment along time axis with given mask_time_indices
            hidden_states[mask_time_indices] = self.masked_spec_embed.to(hidden_states.dtype)
        elif self.config.mask_time_prob > 0 and self.training:
            mask_time_indices = _compute_mask_indices(
                (batch_size, sequence_length),
                mask_prob=self.config.mask_time_prob,
                mask_length=self.config.mask_time_length,
                attention_mask=attention_mask,
                min_masks=self.config.mask_time_min_masks,
            )
            mask_time_indices = torch.tensor(mask_time_indices, device=hidden_states.device, dtype=torch.bool)
            hidden_states[mask_time_indices] = self.masked_spec_embed.to(hidden_states.dtype)

        if self.config.mask_feature_prob > 0 and self.training:
            # generate indices & apply SpecAugment along feature axis
            mask_feature_indices = _compute_mask_indices(
                (batch_size, hidden_size),
                mask_prob=self.config.mask_feature_prob,
                mask_length=self.config.mask_feature_length,
                min_masks=self.config.mask_feature_min_masks,
            )
            mask_feature_indices = torch.tensor(mask_feature_indices, device=hidden_states.device, dtype=torch.bool)
            mask_feature_indices = mask_feature_indices[:, None].expand(-1, sequence_length, -1)
            hidden_states[mask_feature_indices] = 0

        return hidden_states

    def forward(
        self,
        extract_features: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        mask_time_indices: Optional[torch.Tensor] = None,
    ):
        hidden_states, extract_features = self.feature_projection(extract_features)
        hidden_states = self._mask_hidden_states(
            hidden_states, mask_time_indices=mask_time_indices, attention_mask=attention_mask
        )
        hidden_states = hidden_states + self.encoder_ffn(self.encoder_layer_norm(hidden_states))
        return hidden_states


def make():
    torch.manual_seed(0)
    return Wav2Vec2Model(Wav2Vec2Config()).train()


def inputs():
    g = torch.Generator().manual_seed(2)
    f = lambda B, T: torch.randn(B, T, 6, generator=g)
    L = torch.tensor
    return [
        (f(2, 10),),
        (f(2, 8), L([[1] * 8, [1] * 5 + [0] * 3])),
        (f(1, 12),),
        (f(3, 6), L([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4])),
        (f(2, 4),),
        (f(1, 9), None, L([[False, True, True, False, False, False, True, False, False]])),
        (f(2, 16), L([[1] * 16, [1] * 11 + [0] * 5])),
        (f(4, 5),),
    ]
