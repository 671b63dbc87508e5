"""torchaudio SpeedPerturbation: pick one of several Speed modules with ``int(torch.randint(...))``.

``SpeedPerturbation.forward`` kept as in the source (the random index read with ``int(...)``, the
TorchScript-friendly loop over the ModuleList comparing with ``speeder_idx``), and ``Speed`` kept
for the length arithmetic (``torch.ceil(lengths * target / source)``); the polyphase resampler
behind ``Speed`` is reduced to a linear ``F.interpolate`` to the resampled length. Used in a
training-time front end: white noise, speed perturbation, then a log-energy feature over frames.

Source: https://github.com/pytorch/audio/blob/main/src/torchaudio/transforms/_transforms.py (Speed, SpeedPerturbation)

Breaks: ``int(torch.randint(len(self.speeders), ()))`` (a tensor converted to a Python int), which
then selects the module by a Python comparison.

HAND: none — each speed factor gives a different output length, so the output's shape depends
on the random draw; the draw must reach the host.
"""
import math
from typing import Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class Speed(nn.Module):
    def __init__(self, orig_freq, factor) -> None:
        super().__init__()

        self.orig_freq = orig_freq
        self.factor = factor

        self.source_sample_rate = int(factor * orig_freq)
        self.target_sample_rate = int(orig_freq)
        gcd = math.gcd(self.source_sample_rate, self.target_sample_rate)
        self.source_sample_rate //= gcd
        self.target_sample_rate //= gcd

    def _resample(self, waveform):
        new_len = int(math.ceil(self.target_sample_rate * waveform.shape[-1] / self.source_sample_rate))
        shape = waveform.shape
        out = F.interpolate(waveform.reshape(-1, 1, shape[-1]), size=new_len, mode="linear", align_corners=False)
        return out.reshape(*shape[:-1], new_len)

    def forward(self, waveform, lengths: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        if lengths is None:
            out_lengths = None
        else:
            out_lengths = torch.ceil(lengths * self.target_sample_rate / self.source_sample_rate).to(lengths.dtype)

        return self._resample(waveform), out_lengths


class SpeedPerturbation(nn.Module):
    def __init__(self, orig_freq: int, factors: Sequence[float]) -> None:
        super().__init__()

        self.speeders = torch.nn.ModuleList([Speed(orig_freq=orig_freq, factor=factor) for factor in factors])

    def forward(
        self, waveform: torch.Tensor, lengths: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        idx = int(torch.randint(len(self.speeders), ()))
        # NOTE: we do this because TorchScript doesn't allow for
        # indexing ModuleList instances with non-literals.
        for speeder_idx, speeder in enumerate(self.speeders):
            if idx == speeder_idx:
                return speeder(waveform, lengths)
        raise RuntimeError("Speeder not found; execution should have never reached here.")


class PerturbedFrontEnd(nn.Module):
    def __init__(self):
        super().__init__()
        self.perturb = SpeedPerturbation(16000, [0.9, 1.0, 1.1])
        self.proj = nn.Linear(4, 3)

    def forward(self, waveform, lengths):
        # white-noise augmentation first (consumes the generator in proportion to the input size)
        waveform = waveform + 0.01 * torch.randn_like(waveform)
        wav, lens = self.perturb(waveform, lengths)
        n_frames = wav.shape[-1] // 4
        frames = wav[..., : n_frames * 4].reshape(*wav.shape[:-1], n_frames, 4)
        feats = torch.log1p(frames.pow(2))
        return self.proj(feats), lens


def make():
    torch.manual_seed(0)
    return PerturbedFrontEnd()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for b, t in [(2, 40), (1, 33), (3, 64), (2, 17), (1, 100), (4, 20), (2, 50), (1, 81)]:
        out.append((torch.randn(b, t, generator=g), torch.randint(t // 2, t + 1, (b,), generator=g)))
    return out


KIND = "int-random"
