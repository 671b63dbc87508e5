"""SpeechBrain InputNormalization (sentence- and batch-level mean/variance normalization of
features), computing the statistics only on the non-padded frames of every utterance.

Source: https://github.com/speechbrain/speechbrain/blob/develop/speechbrain/processing/features.py
(`InputNormalization.forward`, `InputNormalization._compute_current_stats`; the DDP all-reduce of
the batch statistics is the identity on one process and is left out).

Breaks: `actual_size = torch.round(lengths[snt_id] * x.shape[1]).int()` is a 0-d tensor used as a
slice bound, `x[snt_id, 0:actual_size, ...]`: dynamo reads its value (data-dependent slice size),
once per utterance.

HAND: vectorised masked statistics: a frame mask `arange(T) < round(lengths * T)`, the masked mean
and the unbiased masked standard deviation (sum of squared deviations / (n - 1)), clamped with
the same eps, detached as in the source; sentence and batch normalisation then as before.
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
        N_batches = x.shape[0]

        current_means = []
        current_stds = []

        if self.norm_type == "sentence" or self.norm_type == "speaker":
            # we will do in-place slice assignments over `out`
            out = torch.empty_like(x)
        # otherwise don't assign it yet

        for snt_id in range(N_batches):
            # Avoiding padded time steps
            actual_size = torch.round(lengths[snt_id] * x.shape[1]).int()

            # computing statistics
            current_mean, current_std = self._compute_current_stats(
                x[snt_id, 0:actual_size, ...]
            )

            current_means.append(current_mean)
            current_stds.append(current_std)

            if self.norm_type == "sentence":
                out[snt_id] = (x[snt_id] - current_mean.data) / current_std.data

        if self.norm_type == "batch" or self.norm_type == "global":
            current_mean = torch.mean(torch.stack(current_means), dim=0)
            current_std = torch.mean(torch.stack(current_stds), dim=0)

            if self.norm_type == "batch":
                out = (x - current_mean.data) / (current_std.data)

        return out

    def _compute_current_stats(self, x):
        # Compute current mean
        if self.mean_norm:
            current_mean = torch.mean(x, dim=0).detach().data
        else:
            current_mean = torch.tensor([0.0], device=x.device)

        # Compute current std
        if self.std_norm:
            current_std = torch.std(x, dim=0).detach().data
        else:
            current_std = torch.tensor([1.0], device=x.device)

        # Improving numerical stability of std
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
