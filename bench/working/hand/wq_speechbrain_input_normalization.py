"""SpeechBrain InputNormalization — hand rewrite (see cases/wq_speechbrain_input_normalization.py).

Source: https://github.com/speechbrain/speechbrain/blob/develop/speechbrain/processing/features.py

HAND: vectorised masked statistics instead of slicing each utterance with a 0-d tensor bound.
"""
import torch

KIND = "dynamic-slice-loop"
GRAD = True


class InputNormalization(torch.nn.Module):
    def __init__(self, mean_norm=True, std_norm=True, norm_type="global", avg_factor=None,
                 requires_grad=False, update_until_epoch=3):
        super().__init__()
        self.mean_norm = mean_norm
        self.std_norm = std_norm
        self.norm_type = norm_type
        self.avg_factor = avg_factor
        self.requires_grad = requires_grad
        self.eps = 1e-10

    def forward(self, x, lengths, spk_ids=torch.tensor([]), epoch=0):
        T = x.shape[1]
        actual_size = torch.round(lengths * T).int()
        # frame mask, broadcast over the feature dimensions: [B, T, 1, ...]
        mask = torch.arange(T, device=x.device) < actual_size[:, None]
        mask = mask.reshape(mask.shape + (1,) * (x.dim() - 2)).to(x.dtype)
        current_means, current_stds = self._compute_current_stats(x, mask)

        if self.norm_type == "sentence":
            out = (x - current_means.unsqueeze(1)) / current_stds.unsqueeze(1)

        if self.norm_type == "batch" or self.norm_type == "global":
            current_mean = torch.mean(current_means, dim=0)
            current_std = torch.mean(current_stds, dim=0)

            if self.norm_type == "batch":
                out = (x - current_mean.data) / (current_std.data)

        return out

    def _compute_current_stats(self, x, mask):
        x = x.detach()
        n = mask.sum(dim=1)
        mean = (x * mask).sum(dim=1) / n
        if self.mean_norm:
            current_mean = mean
        else:
            current_mean = torch.zeros(x.shape[0], 1, device=x.device)

        if self.std_norm:
            var = (((x - mean.unsqueeze(1)) ** 2) * mask).sum(dim=1) / (n - 1)
            current_std = var.sqrt()
        else:
            current_std = torch.ones(x.shape[0], 1, device=x.device)

        current_std = torch.max(
            current_std, self.eps * torch.ones_like(current_std)
        )

        return current_mean, current_std


class FeatureFrontend(torch.nn.Module):
    """A tiny front end: linear projection of the frames, then sentence or batch normalisation."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 3)
        self.sent_norm = InputNormalization(norm_type="sentence")
        self.batch_norm = InputNormalization(norm_type="batch")

    def forward(self, feats, lengths, norm_type):
        h = self.proj(feats)
        if norm_type == "sentence":
            return self.sent_norm(h, lengths)
        return self.batch_norm(h, lengths)


def make():
    torch.manual_seed(0)
    return FeatureFrontend()


def inputs():
    g = torch.Generator().manual_seed(1)
    out = []
    for b, t, lens, nt in [
        (3, 10, [1.0, 0.6, 0.3], "sentence"),
        (2, 8, [0.75, 1.0], "batch"),
        (1, 6, [1.0], "sentence"),
        (4, 12, [0.5, 0.25, 1.0, 0.9], "batch"),
        (2, 9, [0.45, 0.8], "sentence"),
        (3, 7, [1.0, 1.0, 1.0], "batch"),
        (2, 16, [0.2, 0.55], "sentence"),
        (3, 5, [0.6, 0.8, 1.0], "batch"),
    ]:
        feats = torch.randn(b, t, 4, generator=g).requires_grad_()
        out.append((feats, torch.tensor(lens), nt))
    return out
