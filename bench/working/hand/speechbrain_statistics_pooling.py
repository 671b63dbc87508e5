"""Hand rewrite of speechbrain_statistics_pooling: frame mask instead of int() slices."""
import torch
import torch.nn as nn


class StatisticsPooling(nn.Module):
    def __init__(self, return_mean=True, return_std=True):
        super().__init__()

        # Small value for GaussNoise
        self.eps = 1e-5
        self.return_mean = return_mean
        self.return_std = return_std
        if not (self.return_mean or self.return_std):
            raise ValueError(
                "both of statistics are equal to False \n"
                "consider enabling mean and/or std statistic pooling"
            )

    def forward(self, x, lengths=None):
        if lengths is None:
            if self.return_mean:
                mean = x.mean(dim=1)
            if self.return_std:
                std = x.std(dim=1)
        else:
            n_frames = torch.round(lengths * x.shape[1])
            frame_mask = (torch.arange(x.shape[1], device=x.device)[None, :] < n_frames[:, None]).to(x.dtype)
            frame_mask = frame_mask.view(x.shape[0], x.shape[1], *[1] * (x.dim() - 2))
            count = frame_mask.sum(dim=1)
            sel_mean = (x * frame_mask).sum(dim=1) / count
            if self.return_mean:
                mean = sel_mean
            if self.return_std:
                dev = (x - sel_mean.unsqueeze(1)) * frame_mask
                std = torch.sqrt((dev * dev).sum(dim=1) / (count - 1))

        if self.return_mean:
            gnoise = self._get_gauss_noise(mean.size(), device=mean.device)
            gnoise = gnoise
            mean += gnoise
        if self.return_std:
            std = std + self.eps

        # Append mean and std of the batch
        if self.return_mean and self.return_std:
            pooled_stats = torch.cat((mean, std), dim=1)
            pooled_stats = pooled_stats.unsqueeze(1)
        elif self.return_mean:
            pooled_stats = mean.unsqueeze(1)
        elif self.return_std:
            pooled_stats = std.unsqueeze(1)

        return pooled_stats

    def _get_gauss_noise(self, shape_of_tensor, device="cpu"):
        gnoise = torch.randn(shape_of_tensor, device=device)
        gnoise -= torch.min(gnoise)
        gnoise /= torch.max(gnoise)
        gnoise = self.eps * ((1 - 9) * gnoise + 9)

        return gnoise


class XvectorHead(nn.Module):
    def __init__(self, in_channels=6, channels=8, emb=4):
        super().__init__()
        self.tdnn = nn.Conv1d(in_channels, channels, kernel_size=3, padding=1)
        self.act = nn.LeakyReLU()
        self.pooling = StatisticsPooling()
        self.fc = nn.Linear(2 * channels, emb)

    def forward(self, feats, lens):
        # feats: [batch, time, features] (speechbrain layout)
        x = self.act(self.tdnn(feats.transpose(1, 2))).transpose(1, 2)
        x = self.pooling(x, lens)
        return self.fc(x)


def make():
    torch.manual_seed(0)
    return XvectorHead()


def inputs():
    g = torch.Generator().manual_seed(0)
    return [
        (torch.randn(2, 10, 6, generator=g), torch.tensor([1.0, 0.6])),
        (torch.randn(3, 8, 6, generator=g), torch.tensor([0.5, 1.0, 0.75])),
        (torch.randn(1, 12, 6, generator=g), torch.tensor([1.0])),
        (torch.randn(4, 7, 6, generator=g), torch.tensor([1.0, 0.43, 0.86, 0.29])),
        (torch.randn(2, 5, 6, generator=g), torch.tensor([0.4, 0.8])),
        (torch.randn(2, 9, 6, generator=g), torch.tensor([0.95, 0.35])),
        (torch.randn(3, 16, 6, generator=g), torch.tensor([0.25, 0.5, 1.0])),
        (torch.randn(1, 6, 6, generator=g), torch.tensor([0.5])),
    ]


KIND = "int-loop"
GRAD = True
