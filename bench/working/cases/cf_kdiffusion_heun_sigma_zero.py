"""k-diffusion's Heun sampler (Karras et al. 2022, Algorithm 2): the churn test
`s_tmin <= sigmas[i] <= s_tmax` and the last-step test `if sigmas[i + 1] == 0` branch on the values
of the noise schedule, a tensor.

Source: https://github.com/crowsonkb/k-diffusion/blob/master/k_diffusion/sampling.py
(`sample_heun`, `to_d`; the same code is in ComfyUI's comfy/k_diffusion/sampling.py).
The denoiser is a tiny conv net.

Breaks: the chained comparison `s_tmin <= sigmas[i] <= s_tmax` (data-dependent branching: the
`and` of a 0-d bool tensor), in the loop; dynamo then skips the frame, so `if sigmas[i + 1] == 0`
(also data-dependent) runs eagerly and is not reported as a separate site.

HAND: `gamma` becomes a 0-d tensor chosen by `torch.where` (with gamma == 0 the churn noise term is
exactly zero, and the source draws `eps` in both cases); the Euler and Heun updates are both
computed and `torch.where(sigmas[i + 1] == 0, euler, heun)` keeps one (the Heun half divides by a
safe sigma where the next sigma is 0; no gradients under no_grad).
"""
import torch
from torch import nn

KIND = "branch-loop"


def append_dims(x, target_dims):
    dims_to_append = target_dims - x.ndim
    return x[(...,) + (None,) * dims_to_append]


def to_d(x, sigma, denoised):
    """Converts a denoiser output to a Karras ODE derivative."""
    return (x - denoised) / append_dims(sigma, x.ndim)


@torch.no_grad()
def sample_heun(model, x, sigmas, extra_args=None, callback=None, disable=None, s_churn=0., s_tmin=0., s_tmax=float('inf'), s_noise=1.):
    """Implements Algorithm 2 (Heun steps) from Karras et al. (2022)."""
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        gamma = min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1) if s_tmin <= sigmas[i] <= s_tmax else 0.
        eps = torch.randn_like(x) * s_noise
        sigma_hat = sigmas[i] * (gamma + 1)
        if gamma > 0:
            x = x + eps * (sigma_hat ** 2 - sigmas[i] ** 2) ** 0.5
        denoised = model(x, sigma_hat * s_in, **extra_args)
        d = to_d(x, sigma_hat, denoised)
        if callback is not None:
            callback({'x': x, 'i': i, 'sigma': sigmas[i], 'sigma_hat': sigma_hat, 'denoised': denoised})
        dt = sigmas[i + 1] - sigma_hat
        if sigmas[i + 1] == 0:
            # Euler method
            x = x + d * dt
        else:
            # Heun's method
            x_2 = x + d * dt
            denoised_2 = model(x_2, sigmas[i + 1] * s_in, **extra_args)
            d_2 = to_d(x_2, sigmas[i + 1], denoised_2)
            d_prime = (d + d_2) / 2
            x = x + d_prime * dt
    return x


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x, sigma):
        c_skip = 1 / (sigma ** 2 + 1)
        return x * c_skip[:, None, None, None] + 0.3 * torch.tanh(self.conv(x))


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Denoiser()

    def forward(self, x, sigmas, s_churn, s_tmin, s_tmax):
        return sample_heun(self.model, x, sigmas, s_churn=s_churn, s_tmin=s_tmin, s_tmax=s_tmax)


def make():
    torch.manual_seed(0)
    return Sampler()


def inputs():
    torch.manual_seed(0)
    inf = float('inf')
    schedules = [
        ([10.0, 3.0, 1.0, 0.0], 0.0, 0.0, inf),      # default: no churn, last step Euler
        ([10.0, 3.0, 1.0, 0.0], 40.0, 0.0, inf),     # churn on every step
        ([10.0, 3.0, 1.0, 0.0], 40.0, 2.0, 5.0),     # churn only where 2 <= sigma <= 5
        ([5.0, 2.0, 0.5], 10.0, 0.0, inf),           # does not end at 0: Heun on every step
        ([8.0, 0.0], 1.0, 0.0, 4.0),                 # one Euler step, sigma above s_tmax
        ([4.0, 2.0, 1.0, 0.5, 0.0], 80.0, 0.6, 3.0),
        ([1.0, 0.5, 0.1], 0.0, 0.0, inf),
        ([6.0, 0.0, 0.0], 40.0, 0.0, inf),           # a zero mid-schedule
    ]
    return [(torch.randn(2, 2, 4, 4) * s[0], torch.tensor(s), churn, tmin, tmax) for s, churn, tmin, tmax in schedules]
