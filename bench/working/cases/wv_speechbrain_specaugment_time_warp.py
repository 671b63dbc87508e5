"""SpeechBrain SpecAugment (time warp + frequency/time masks) applied on GPU inside the model.

Source: https://github.com/speechbrain/speechbrain/blob/015e54a678512edf4403bcc42e94f02a9b7eacfc/speechbrain/lobes/augment.py
(class SpecAugment: forward, time_warp, mask_along_axis, kept as in the source; the Example shapes
reduced to (B, T, F) = (2..3, 12..20, 6..8)).

Breaks: in time_warp the warp centre `c` and the new width `w` are 0-d tensors drawn with
torch.randint (the second draw with tensor bounds `c - window`, `c + window`); they are then used
as a slice bound (`x[:, :, :c]`) and as an interpolate output size (`(w, x.shape[3])`), which
needs their Python values (data-dependent). In mask_along_axis `max(1, D - mask_len.max())`
compares a tensor with a Python int (data-dependent branch inside builtin max) and its result is
a tensor bound of torch.randint.

HAND: partial — time_warp rewritten without Python values of c/w: the second draw is
`c - window + torch.randint(0, 2 * window)` (CPU randint computes `random() % range + low`, and the
range 2*window is static, so the same number is drawn), and the two bicubic interpolations
(align_corners=True; the frequency axis keeps its size, so only the time axis is resampled) are
written as one fixed-size gather over the time axis with the bicubic (A=-0.75) weights and
clamped neighbour indices (ATen's fused multiply-adds emulated in float64, so values agree to an ulp), copied back into x in place as the source's slice assignments do.
mask_along_axis is left as it is (its randint bound is data-dependent, so the draw cannot be
reproduced without the Python value).
"""
import torch

KIND = "tensor as slice bound / interpolate size"


class SpecAugment(torch.nn.Module):
    def __init__(
        self,
        time_warp=True,
        time_warp_window=5,
        time_warp_mode="bicubic",
        freq_mask=True,
        freq_mask_width=(0, 20),
        n_freq_mask=2,
        time_mask=True,
        time_mask_width=(0, 100),
        n_time_mask=2,
        replace_with_zero=True,
    ):
        super().__init__()
        assert (
            time_warp or freq_mask or time_mask
        ), "at least one of time_warp, time_mask, or freq_mask should be applied"

        self.apply_time_warp = time_warp
        self.time_warp_window = time_warp_window
        self.time_warp_mode = time_warp_mode

        self.freq_mask = freq_mask
        if isinstance(freq_mask_width, int):
            freq_mask_width = (0, freq_mask_width)
        self.freq_mask_width = freq_mask_width
        self.n_freq_mask = n_freq_mask

        self.time_mask = time_mask
        if isinstance(time_mask_width, int):
            time_mask_width = (0, time_mask_width)
        self.time_mask_width = time_mask_width
        self.n_time_mask = n_time_mask

        self.replace_with_zero = replace_with_zero

    def forward(self, x):
        if self.apply_time_warp:
            x = self.time_warp(x)
        if self.freq_mask:
            x = self.mask_along_axis(x, dim=2)
        if self.time_mask:
            x = self.mask_along_axis(x, dim=1)
        return x

    def time_warp(self, x):
        """Time warping with torch.nn.functional.interpolate"""
        original_size = x.shape
        window = self.time_warp_window

        # 2d interpolation requires 4D or higher dimension tensors
        # x: (Batch, Time, Freq) -> (Batch, 1, Time, Freq)
        if x.dim() == 3:
            x = x.unsqueeze(1)

        time = x.shape[2]
        if time - window <= window:
            return x.view(*original_size)

        # compute center and corepoding window
        c = torch.randint(window, time - window, (1,))[0]
        w = torch.randint(c - window, c + window, (1,))[0] + 1

        left = torch.nn.functional.interpolate(
            x[:, :, :c],
            (w, x.shape[3]),
            mode=self.time_warp_mode,
            align_corners=True,
        )
        right = torch.nn.functional.interpolate(
            x[:, :, c:],
            (time - w, x.shape[3]),
            mode=self.time_warp_mode,
            align_corners=True,
        )

        x[:, :, :w] = left
        x[:, :, w:] = right

        return x.view(*original_size)

    def mask_along_axis(self, x, dim):
        original_size = x.shape
        if x.shape == 4:
            x = x.view(-1, x.shape[2], x.shape[3])

        batch, time, fea = x.shape

        if dim == 1:
            D = time
            n_mask = self.n_time_mask
            width_range = self.time_mask_width
        else:
            D = fea
            n_mask = self.n_freq_mask
            width_range = self.freq_mask_width

        mask_len = torch.randint(
            width_range[0], width_range[1], (batch, n_mask), device=x.device
        ).unsqueeze(2)

        mask_pos = torch.randint(
            0, max(1, D - mask_len.max()), (batch, n_mask), device=x.device
        ).unsqueeze(2)

        # compute masks
        arange = torch.arange(D, device=x.device).view(1, 1, -1)
        mask = (mask_pos <= arange) * (arange < (mask_pos + mask_len))
        mask = mask.any(dim=1)

        if dim == 1:
            mask = mask.unsqueeze(2)
        else:
            mask = mask.unsqueeze(1)

        if self.replace_with_zero:
            val = 0.0
        else:
            val = x.mean(dim=dim)

        x = x.masked_fill_(mask, val)
        return x.view(*original_size)


def make():
    torch.manual_seed(0)
    return SpecAugment(
        time_warp=True,
        time_warp_window=3,
        freq_mask=True,
        freq_mask_width=(0, 3),
        n_freq_mask=2,
        time_mask=True,
        time_mask_width=(0, 5),
        n_time_mask=2,
    )


def inputs():
    g = torch.Generator().manual_seed(0)
    shapes = [(2, 12, 6), (3, 16, 8), (2, 20, 6), (1, 14, 8), (2, 9, 6), (3, 18, 7), (2, 7, 6), (2, 24, 8)]
    # (2, 7, 6) and (2, 6, 6)-like: time - window <= window returns the input unchanged
    out = [(torch.randn(*s, generator=g),) for s in shapes]
    out.append((torch.randn(2, 6, 6, generator=g),))
    return out
