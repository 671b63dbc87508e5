"""k-diffusion's Heun sampler (`sample_heun`): the only sign that `sigmas` holds tensors is that an
element goes to the module's helper `to_d`, which hands it on to `append_dims`, which reads its
`.ndim` (a float has none). An element of a tensor is a 0-d tensor, so the churn test
`s_tmin <= sigmas[i] <= s_tmax` is the `and` of two tensor comparisons: testing it breaks, in the
loop, and dynamo skips the whole frame; `if sigmas[i + 1] == 0` after it then runs eagerly."""
import torch
from torch import nn


def append_dims(x, target_dims):
    return x[(...,) + (None,) * (target_dims - x.ndim)]


def to_d(x, sigma, denoised):
    return (x - denoised) / append_dims(sigma, x.ndim)


def sample_heun(x, sigmas, s_tmin, s_tmax):
    for i in range(len(sigmas) - 1):
        gamma = 0.4 if s_tmin <= sigmas[i] <= s_tmax else 0.0  # expect: GM102
        d = to_d(x, sigmas[i + 1] + 1, x * gamma)
        if sigmas[i + 1] == 0:  # expect: GM101 (latent: dynamo does not reach it)
            x = x + d
        else:
            x = x + to_d(x, sigmas[i + 1], x * 0.5)
    return x


class Sampler(nn.Module):
    def forward(self, x, sigmas, s_tmin, s_tmax):
        return sample_heun(x, sigmas, s_tmin, s_tmax)


def sample():
    return [(Sampler(), (torch.ones(2, 3), torch.tensor(s), 0.5, 5.0), {}) for s in ([6.0, 2.0, 0.0], [4.0, 2.0, 1.0])]
