"""Coqui TTS `rand_segments`/`segment`: pick one random window of `segment_size` frames per
utterance (within its length) for the waveform decoder. VITS calls it in every training forward
(`rand_segments(z, y_lengths, self.spec_segment_size, let_short_samples=True, pad_short=True)`),
and other callers use the default checked mode, which asserts every utterance is longer than the
window.

Source: https://github.com/coqui-ai/TTS/blob/dev/TTS/tts/utils/helpers.py (`segment`,
`rand_segments`); the caller: https://github.com/coqui-ai/TTS/blob/dev/TTS/tts/models/vits.py
(`Vits.forward`).

Breaks: `assert all(len_diff > 0), f"...{_x_lenghts}"` (iterating a tensor and branching on its
values), and in `segment`'s per-utterance loop `if pad_short and index_end >= x.size(2)`
(data-dependent branch) and `x_i[:, index_start:index_end]` (slicing with tensor bounds: `Tensor.item()`).

HAND: `segment` gathers all windows at once: indices `segment_indices[:, None] + arange(width)` into
`x` zero-padded on the right (what the per-row pad does), `width = min(T, segment_size)` as the loop's
`zeros_like(x[:, :, :segment_size])`; the length check and its AssertionError (same text, with the
lengths tensor) move into a `torch.library.custom_op` with an ORDERED effect. Written for the
documented inputs: `x_lengths <= T`.
"""

import torch

KIND = "assert+slice-loop"
GRAD = True


def segment(x: torch.tensor, segment_indices: torch.tensor, segment_size=4, pad_short=False):
    # pad the input tensor if it is shorter than the segment size
    if pad_short and x.shape[-1] < segment_size:
        x = torch.nn.functional.pad(x, (0, segment_size - x.size(2)))

    segments = torch.zeros_like(x[:, :, :segment_size])

    for i in range(x.size(0)):
        index_start = segment_indices[i]
        index_end = index_start + segment_size
        x_i = x[i]
        if pad_short and index_end >= x.size(2):
            # pad the sample if it is shorter than the segment size
            x_i = torch.nn.functional.pad(x_i, (0, (index_end + 1) - x.size(2)))
        segments[i] = x_i[:, index_start:index_end]
    return segments


def rand_segments(
    x: torch.tensor, x_lengths: torch.tensor = None, segment_size=4, let_short_samples=False, pad_short=False
):
    _x_lenghts = x_lengths.clone()
    B, _, T = x.size()
    if pad_short:
        if T < segment_size:
            x = torch.nn.functional.pad(x, (0, segment_size - T))
            T = segment_size
    if _x_lenghts is None:
        _x_lenghts = T
    len_diff = _x_lenghts - segment_size
    if let_short_samples:
        _x_lenghts[len_diff < 0] = segment_size
        len_diff = _x_lenghts - segment_size
    else:
        assert all(
            len_diff > 0
        ), f" [!] At least one sample is shorter than the segment size ({segment_size}). \n {_x_lenghts}"
    segment_indices = (torch.rand([B]).type_as(x) * (len_diff + 1)).long()
    ret = segment(x, segment_indices, segment_size, pad_short=pad_short)
    return ret, segment_indices


def make():
    return rand_segments


def inputs():
    g = torch.Generator().manual_seed(4)
    x = lambda b, c, t: torch.randn(b, c, t, generator=g)
    L = lambda *v: torch.tensor(v)
    return [
        (x(2, 3, 20), L(20, 12), 8),                      # checked mode, default flags
        (x(3, 2, 16), L(16, 5, 9), 8, True, True),        # VITS: a short utterance is padded
        (x(2, 2, 5), L(5, 3), 8, True, True),             # whole batch shorter than the window
        (x(2, 2, 5), L(5, 4), 8, True, False),            # short batch, no padding: 5-frame windows
        (x(2, 3, 12), L(12, 12), 4, True, True),          # windows may end exactly at T: per-row pad
        (x(1, 4, 10), L(9,), 8),                          # len_diff == 1
        (x(4, 1, 24), L(24, 17, 9, 24), 8, True, False),  # all long enough
        (x(2, 2, 14).double(), L(14, 10), 6, True, True),
        (x(3, 2, 8), L(8, 8, 8), 8, True, True),          # length == window: index 0
    ]


def failing_inputs():
    g = torch.Generator().manual_seed(5)
    return [
        (torch.randn(2, 3, 20, generator=g), torch.tensor([20, 8]), 8),   # len_diff == 0
        (torch.randn(3, 3, 16, generator=g), torch.tensor([3, 16, 2]), 8),
    ]
