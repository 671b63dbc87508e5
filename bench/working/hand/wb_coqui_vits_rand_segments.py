"""Hand rewrite of cases/wb_coqui_vits_rand_segments.py: `segment` gathers every window at once
from the zero-padded input, and the length check (same AssertionError text) runs inside a
`torch.library.custom_op` with an ORDERED effect."""

import torch
from torch._library.effects import EffectType

KIND = "assert+slice-loop"
GRAD = True


def segment(x: torch.tensor, segment_indices: torch.tensor, segment_size=4, pad_short=False):
    # pad the input tensor if it is shorter than the segment size
    if pad_short and x.shape[-1] < segment_size:
        x = torch.nn.functional.pad(x, (0, segment_size - x.size(2)))

    # the loop writes x[i, :, s_i:s_i + width] into a zeros_like(x[:, :, :segment_size]) of this
    # width, reading zeros past the end of x (the per-row pad); for x_lengths <= T those are all
    # the frames it can read
    B, C, T = x.shape
    width = min(T, segment_size)
    x_padded = torch.nn.functional.pad(x, (0, segment_size))
    index = segment_indices[:, None, None] + torch.arange(width, device=x.device)
    return torch.gather(x_padded, 2, index.expand(B, C, width))


_NS, _NAME = "wb_coqui", "check_segment_lengths"
if not hasattr(getattr(torch.ops, _NS), _NAME):

    @torch.library.custom_op(f"{_NS}::{_NAME}", mutates_args=())
    def _check_segment_lengths(len_diff: torch.Tensor, x_lengths: torch.Tensor, segment_size: int) -> None:
        assert all(
            len_diff > 0
        ), f" [!] At least one sample is shorter than the segment size ({segment_size}). \n {x_lengths}"

    @_check_segment_lengths.register_fake
    def _(len_diff, x_lengths, segment_size):
        return None

    _check_segment_lengths.register_effect(EffectType.ORDERED)


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
        # the check, its message and the AssertionError happen at run time, inside the graph
        getattr(getattr(torch.ops, _NS), _NAME)(len_diff, _x_lenghts, segment_size)
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
