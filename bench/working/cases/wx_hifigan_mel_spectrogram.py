"""HiFi-GAN mel_spectrogram (meldataset.py): the mel front end used for the mel-reconstruction loss
of HiFi-GAN (and copied into VITS, BigVGAN, ...), computed on generator output inside the training step.

Source: https://github.com/jik876/hifi-gan/blob/master/meldataset.py
Breaks: `if torch.min(y) < -1.:` / `if torch.max(y) > 1.:` branch on a tensor value (data-dependent
jump), and the `print('min value is ', torch.min(y))` calls themselves. librosa's mel filter bank is
replaced by a deterministic torch stand-in (`librosa_mel_fn`); torch.stft uses return_complex=True +
view_as_real (as in BigVGAN's copy) because return_complex=False is gone on current torch.
HAND: the two range checks and prints move into a torch.library.custom_op with an ORDERED effect that
prints the same text (same tensor repr) when the condition holds.
"""
import torch

KIND = "data-dependent branch + print"

MAX_WAV_VALUE = 32768.0


def librosa_mel_fn(sr, n_fft, n_mels, fmin, fmax):
    # deterministic stand-in for librosa.filters.mel (triangular filters on a linear grid)
    n_freq = n_fft // 2 + 1
    freqs = torch.linspace(0, sr / 2, n_freq, dtype=torch.float64)
    pts = torch.linspace(fmin, fmax, n_mels + 2, dtype=torch.float64)
    lower, center, upper = pts[:-2, None], pts[1:-1, None], pts[2:, None]
    up = (freqs[None] - lower) / (center - lower)
    down = (upper - freqs[None]) / (upper - center)
    return torch.clamp(torch.minimum(up, down), min=0).numpy()


def dynamic_range_compression_torch(x, C=1, clip_val=1e-5):
    return torch.log(torch.clamp(x, min=clip_val) * C)


def spectral_normalize_torch(magnitudes):
    output = dynamic_range_compression_torch(magnitudes)
    return output


mel_basis = {}
hann_window = {}


def mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax, center=False):
    if torch.min(y) < -1.:
        print('min value is ', torch.min(y))
    if torch.max(y) > 1.:
        print('max value is ', torch.max(y))

    global mel_basis, hann_window
    if fmax not in mel_basis:
        mel = librosa_mel_fn(sampling_rate, n_fft, num_mels, fmin, fmax)
        mel_basis[str(fmax)+'_'+str(y.device)] = torch.from_numpy(mel).float().to(y.device)
        hann_window[str(y.device)] = torch.hann_window(win_size).to(y.device)

    y = torch.nn.functional.pad(y.unsqueeze(1), (int((n_fft-hop_size)/2), int((n_fft-hop_size)/2)), mode='reflect')
    y = y.squeeze(1)

    spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size, window=hann_window[str(y.device)],
                      center=center, pad_mode='reflect', normalized=False, onesided=True, return_complex=True)
    spec = torch.view_as_real(spec)

    spec = torch.sqrt(spec.pow(2).sum(-1)+(1e-9))

    spec = torch.matmul(mel_basis[str(fmax)+'_'+str(y.device)], spec)
    spec = spectral_normalize_torch(spec)

    return spec


def mel_loss(y_g_hat, y_mel):
    # as in train.py: y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), ...); F.l1_loss(y_mel, y_g_hat_mel) * 45
    y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), 64, 8, 8000, 16, 64, 0, 4000)
    return torch.nn.functional.l1_loss(y_mel, y_g_hat_mel) * 45


def make():
    torch.manual_seed(0)
    return mel_loss


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for scale in (0.3, 0.9, 1.5, 0.5, 2.0, 0.99, 1.2, 0.1):
        y = (torch.rand(2, 1, 256, generator=g) * 2 - 1) * scale
        if scale == 1.2:
            y[0, 0, 3] = 1.3  # only max out of range
        mel = torch.randn(2, 8, 16, generator=g)
        out.append((y, mel))
    out.append((torch.full((2, 1, 256), -1.5) + torch.rand(2, 1, 256, generator=g) * 0.2, torch.randn(2, 8, 16, generator=g)))
    return out
