"""Hand rewrite of cases/cf_kdiffusion_heun_sigma_zero.py: `gamma` as a 0-d tensor chosen with
`torch.where`, and both the Euler and the Heun update computed with `torch.where` choosing one."""
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
        in_range = (s_tmin <= sigmas[i]) & (sigmas[i] <= s_tmax)
        gamma = torch.where(in_range, min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1), 0.)
        eps = torch.randn_like(x) * s_noise
        sigma_hat = sigmas[i] * (gamma + 1)
        # gamma == 0 gives sigma_hat == sigmas[i], so the added term is exactly 0
        x = x + eps * (sigma_hat ** 2 - sigmas[i] ** 2) ** 0.5
        denoised = model(x, sigma_hat * s_in, **extra_args)
        d = to_d(x, sigma_hat, denoised)
        if callback is not None:
            callback({'x': x, 'i': i, 'sigma': sigmas[i], 'sigma_hat': sigma_hat, 'denoised': denoised})
        dt = sigmas[i + 1] - sigma_hat
        last = sigmas[i + 1] == 0
        # Euler method
        x_euler = x + d * dt
        # Heun's method (with a safe sigma where the next sigma is 0; that result is not used)
        sigma_next = torch.where(last, torch.ones_like(sigmas[i + 1]), sigmas[i + 1])
        x_2 = x + d * dt
        denoised_2 = model(x_2, sigma_next * s_in, **extra_args)
        d_2 = to_d(x_2, sigma_next, denoised_2)
        d_prime = (d + d_2) / 2
        x = torch.where(last, x_euler, x + d_prime * dt)
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
