"""torchaudio's mel filterbank warns when a filter is all zero:
`if (fb.max(dim=0).values == 0.0).any(): warnings.warn(...)`, here in a mel-scale transform that
builds the filterbank for the spectrogram it is given (as torchaudio's MelScale did lazily in
`forward` before 0.8, and as code calling `F.melscale_fbanks` per batch does).

Source: https://github.com/pytorch/audio/blob/main/src/torchaudio/functional/functional.py
(`melscale_fbanks`, `_hz_to_mel`, `_mel_to_hz`, `_create_triangular_filterbank`) and
https://github.com/pytorch/audio/blob/main/src/torchaudio/transforms/_transforms.py (`MelScale.forward`).

Breaks: `if (fb.max(dim=0).values == 0.0).any():` (data-dependent branching), and for
`mel_scale="slaney"` the masked assignment `freqs[log_t] = ...exp(logstep * (mels[log_t] - ...))`
(boolean-mask gather: dynamic shape).

HAND: the masked assignment becomes `torch.where(log_t, ..., freqs)`; the test and the warning move
into a `torch.library.custom_op` with an ORDERED effect that issues the same UserWarning at run time
(the op also receives the spectrogram, so it is not constant-folded while tracing).
"""
import math
import warnings
from typing import Optional

import torch
from torch import Tensor

KIND = "branch-warnings"


def _hz_to_mel(freq: float, mel_scale: str = "htk") -> float:
    if mel_scale not in ["slaney", "htk"]:
        raise ValueError('mel_scale should be one of "htk" or "slaney".')

    if mel_scale == "htk":
        return 2595.0 * math.log10(1.0 + (freq / 700.0))

    # Fill in the linear part
    f_min = 0.0
    f_sp = 200.0 / 3

    mels = (freq - f_min) / f_sp

    # Fill in the log-scale part
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0

    if freq >= min_log_hz:
        mels = min_log_mel + math.log(freq / min_log_hz) / logstep

    return mels


def _mel_to_hz(mels: Tensor, mel_scale: str = "htk") -> Tensor:
    if mel_scale not in ["slaney", "htk"]:
        raise ValueError('mel_scale should be one of "htk" or "slaney".')

    if mel_scale == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)

    # Fill in the linear scale
    f_min = 0.0
    f_sp = 200.0 / 3
    freqs = f_min + f_sp * mels

    # And now the nonlinear scale
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0

    log_t = mels >= min_log_mel
    freqs[log_t] = min_log_hz * torch.exp(logstep * (mels[log_t] - min_log_mel))

    return freqs


def _create_triangular_filterbank(all_freqs: Tensor, f_pts: Tensor) -> Tensor:
    # Adopted from Librosa
    # calculate the difference between each filter mid point and each stft freq point in hertz
    f_diff = f_pts[1:] - f_pts[:-1]  # (n_filter + 1)
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)  # (n_freqs, n_filter + 2)
    # create overlapping triangles
    zero = torch.zeros(1)
    down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]  # (n_freqs, n_filter)
    up_slopes = slopes[:, 2:] / f_diff[1:]  # (n_freqs, n_filter)
    fb = torch.max(zero, torch.min(down_slopes, up_slopes))

    return fb


def melscale_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int,
                    norm: Optional[str] = None, mel_scale: str = "htk") -> Tensor:
    if norm is not None and norm != "slaney":
        raise ValueError('norm must be one of None or "slaney"')

    # freq bins
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)

    # calculate mel freq bins
    m_min = _hz_to_mel(f_min, mel_scale=mel_scale)
    m_max = _hz_to_mel(f_max, mel_scale=mel_scale)

    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_scale=mel_scale)

    # create filterbank
    fb = _create_triangular_filterbank(all_freqs, f_pts)

    if norm is not None and norm == "slaney":
        # Slaney-style mel is scaled to be approx constant energy per channel
        enorm = 2.0 / (f_pts[2 : n_mels + 2] - f_pts[:n_mels])
        fb *= enorm.unsqueeze(0)

    if (fb.max(dim=0).values == 0.0).any():
        warnings.warn(
            "At least one mel filterbank has all zero values. "
            f"The value for `n_mels` ({n_mels}) may be set too high. "
            f"Or, the value for `n_freqs` ({n_freqs}) may be set too low."
        )

    return fb


def mel_scale(specgram: Tensor, sample_rate: int, n_mels: int, f_min: float, f_max: float,
              norm: Optional[str], mel_scale: str) -> Tensor:
    fb = melscale_fbanks(specgram.size(-2), f_min, f_max, n_mels, sample_rate, norm, mel_scale)
    # (..., time, freq) dot (freq, n_mels) -> (..., n_mels, time)
    mel_specgram = torch.matmul(specgram.transpose(-1, -2), fb).transpose(-1, -2)
    return mel_specgram


def make():
    return mel_scale


def inputs():
    torch.manual_seed(0)
    spec = lambda n_freqs: torch.rand(1, n_freqs, 5)
    return [
        (spec(201), 16000, 40, 0.0, 8000.0, None, "htk"),
        (spec(201), 16000, 128, 0.0, 8000.0, None, "htk"),      # too many mels: warns
        (spec(33), 16000, 40, 0.0, 8000.0, None, "htk"),        # too few freqs: warns
        (spec(201), 16000, 40, 0.0, 8000.0, "slaney", "slaney"),
        (spec(65), 8000, 64, 20.0, 4000.0, "slaney", "slaney"), # warns
        (spec(129), 22050, 16, 0.0, 11025.0, None, "slaney"),
        (spec(257), 16000, 80, 0.0, 8000.0, "slaney", "htk"),
        (spec(17), 16000, 4, 100.0, 700.0, None, "htk"),
    ]
