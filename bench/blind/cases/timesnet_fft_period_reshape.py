"""TimesNet (Time-Series-Library): pick the k dominant periods of the series with an FFT, fold the
1-D series into a 2-D [cycles, period] grid for each period, run an Inception 2-D conv block over it,
and mix the k results with softmax weights from the FFT amplitudes.

Source: https://github.com/thuml/Time-Series-Library/blob/main/models/TimesNet.py
        (FFT_for_Period, TimesBlock) and
        https://github.com/thuml/Time-Series-Library/blob/main/layers/Conv_Blocks.py (Inception_Block_V1).
Reduced: one TimesBlock with tiny d_model/d_ff, num_kernels=2, configs as a SimpleNamespace.

Breaks: `if (self.seq_len + self.pred_len) % period != 0:` — the periods come from
`top_list.detach().cpu().numpy()` (dynamo traces the NumPy array as a tensor, so the `.numpy()`
itself does not break), and the padding branch, the fold `out.reshape(B, length // period, period, N)`
and the conv over it all depend on the data-dependent period.

HAND: none — the 2-D grid the conv block runs over has shape [B, N, length // period, period] with
the period chosen from the data; the convolution over that fold is not the same computation for any
fixed shape.
"""
from types import SimpleNamespace

import torch
import torch.fft
import torch.nn as nn
import torch.nn.functional as F


class Inception_Block_V1(nn.Module):
    def __init__(self, in_channels, out_channels, num_kernels=6, init_weight=True):
        super(Inception_Block_V1, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_kernels = num_kernels
        kernels = []
        for i in range(self.num_kernels):
            kernels.append(nn.Conv2d(in_channels, out_channels, kernel_size=2 * i + 1, padding=i))
        self.kernels = nn.ModuleList(kernels)
        if init_weight:
            self._initialize_weights()

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        res_list = []
        for i in range(self.num_kernels):
            res_list.append(self.kernels[i](x))
        res = torch.stack(res_list, dim=-1).mean(-1)
        return res


def FFT_for_Period(x, k=2):
    # [B, T, C]
    xf = torch.fft.rfft(x, dim=1)
    # find period by amplitudes
    frequency_list = abs(xf).mean(0).mean(-1)
    frequency_list[0] = 0
    _, top_list = torch.topk(frequency_list, k)
    top_list = top_list.detach().cpu().numpy()
    period = x.shape[1] // top_list
    return period, abs(xf).mean(-1)[:, top_list]


class TimesBlock(nn.Module):
    def __init__(self, configs):
        super(TimesBlock, self).__init__()
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.k = configs.top_k
        # parameter-efficient design
        self.conv = nn.Sequential(
            Inception_Block_V1(configs.d_model, configs.d_ff,
                               num_kernels=configs.num_kernels),
            nn.GELU(),
            Inception_Block_V1(configs.d_ff, configs.d_model,
                               num_kernels=configs.num_kernels)
        )

    def forward(self, x):
        B, T, N = x.size()
        period_list, period_weight = FFT_for_Period(x, self.k)

        res = []
        for i in range(self.k):
            period = period_list[i]
            # padding
            if (self.seq_len + self.pred_len) % period != 0:
                length = (
                    ((self.seq_len + self.pred_len) // period) + 1) * period
                padding = x[:, -(length - (self.seq_len + self.pred_len)):, :]
                out = torch.cat([x, padding], dim=1)
            else:
                length = (self.seq_len + self.pred_len)
                out = x
            # reshape
            out = out.reshape(B, length // period, period,
                              N).permute(0, 3, 1, 2).contiguous()
            # 2D conv: from 1d Variation to 2d Variation
            out = self.conv(out)
            # reshape back
            out = out.permute(0, 2, 3, 1).reshape(B, -1, N)
            res.append(out[:, :(self.seq_len + self.pred_len), :])
        res = torch.stack(res, dim=-1)
        # adaptive aggregation
        period_weight = F.softmax(period_weight, dim=1)
        period_weight = period_weight.unsqueeze(
            1).unsqueeze(1).repeat(1, T, N, 1)
        res = torch.sum(res * period_weight, -1)
        # residual connection
        res = res + x
        return res


SEQ_LEN, PRED_LEN, D_MODEL = 12, 4, 3


def make():
    torch.manual_seed(0)
    configs = SimpleNamespace(seq_len=SEQ_LEN, pred_len=PRED_LEN, top_k=2, d_model=D_MODEL, d_ff=4,
                              num_kernels=2)
    return TimesBlock(configs)


def inputs():
    g = torch.Generator().manual_seed(0)
    T = SEQ_LEN + PRED_LEN
    t = torch.arange(T, dtype=torch.float32)
    out = []
    # series with different dominant periods (16 = T: some divide T, some do not)
    for b, periods in [(2, (4, 8)), (1, (5, 3)), (2, (16, 2)), (3, (6, 4)),
                       (1, (7, 2.5)), (2, (3.2, 8)), (1, (2, 4)), (2, (5.3, 16))]:
        s = sum(torch.sin(2 * torch.pi * t / p) * (1.0 / (j + 1)) for j, p in enumerate(periods))
        x = s.view(1, T, 1).repeat(b, 1, D_MODEL) + 0.1 * torch.randn(b, T, D_MODEL, generator=g)
        out.append((x,))
    return out


KIND = "numpy-dynamic-shape"
GRAD = True
