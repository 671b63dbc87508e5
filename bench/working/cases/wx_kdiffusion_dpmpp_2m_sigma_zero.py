"""k-diffusion DPM-Solver++(2M) sampler loop (sample_dpmpp_2m) driving a tiny Karras-style denoiser.

Source: https://github.com/crowsonkb/k-diffusion/blob/master/k_diffusion/sampling.py (sample_dpmpp_2m)
        https://github.com/crowsonkb/k-diffusion/blob/master/k_diffusion/external.py (DiscreteEpsDDPMDenoiser-style c_skip/c_out wrapper, reduced)
Breaks: `if old_denoised is None or sigmas[i + 1] == 0:` -- `sigmas[i + 1] == 0` is a 0-d bool tensor
        used as a Python condition (data-dependent branch), once per sampler step after the first.
        (tqdm's trange is replaced by a range stub; the loop itself is unchanged.)
HAND: the second-order branch is computed with a "safe" r (torch.where(sigmas[i+1] == 0, 1, r)) and the
      update chooses denoised vs denoised_d with torch.where; the Python `old_denoised is None` test stays.
"""
import torch
from torch import nn

KIND = "tensor-bool branch in sampler loop"


def trange(n, disable=None):  # stand-in for tqdm.auto.trange
    return range(n)


class TinyDenoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.SiLU(), nn.Conv2d(8, 2, 3, padding=1))
        self.sigma_data = 1.0

    def forward(self, x, sigma):
        sigma = sigma[:, None, None, None]
        c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
        c_out = sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2) ** 0.5
        c_in = 1 / (sigma ** 2 + self.sigma_data ** 2) ** 0.5
        return x * c_skip + self.net(x * c_in) * c_out


@torch.no_grad()
def sample_dpmpp_2m(model, x, sigmas, extra_args=None, callback=None, disable=None):
    """DPM-Solver++(2M)."""
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    sigma_fn = lambda t: t.neg().exp()
    t_fn = lambda sigma: sigma.log().neg()
    old_denoised = None

    for i in trange(len(sigmas) - 1, disable=disable):
        denoised = model(x, sigmas[i] * s_in, **extra_args)
        if callback is not None:
            callback({'x': x, 'i': i, 'sigma': sigmas[i], 'sigma_hat': sigmas[i], 'denoised': denoised})
        t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
        h = t_next - t
        if old_denoised is None or sigmas[i + 1] == 0:
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised
        else:
            h_last = t - t_fn(sigmas[i - 1])
            r = h_last / h
            denoised_d = (1 + 1 / (2 * r)) * denoised - (1 / (2 * r)) * old_denoised
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised_d
        old_denoised = denoised
    return x


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7.0):
    ramp = torch.linspace(0, 1, n)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return torch.cat([sigmas, sigmas.new_zeros([1])])


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = TinyDenoiser()

    def forward(self, x, sigmas):
        return sample_dpmpp_2m(self.model, x, sigmas)


def make():
    torch.manual_seed(0)
    return Sampler()


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    for n, smax, trailing_zero in [(3, 10.0, True), (5, 14.6, True), (1, 5.0, True), (4, 3.0, False),
                                   (2, 1.0, False), (6, 20.0, True), (3, 0.5, False), (1, 2.0, False)]:
        sig = get_sigmas_karras(n, 0.03, smax)
        if not trailing_zero:
            sig = sig[:-1]
        x = torch.randn(2, 2, 4, 4, generator=g) * sig[0]
        out.append((x, sig))
    return out
