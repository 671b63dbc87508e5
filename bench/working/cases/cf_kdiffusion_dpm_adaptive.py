"""k-diffusion's adaptive DPM-Solver-12: a `while` loop on a tensor time and a PID step-size
controller that reads the error estimate with `float(error)` and accepts/rejects on it.

Source: https://github.com/crowsonkb/k-diffusion/blob/master/k_diffusion/sampling.py
(`PIDStepSizeController.propose_step`, `DPMSolver.dpm_solver_adaptive`, `sample_dpm_adaptive`).
The denoiser is a tiny conv net; order 2 (DPM-Solver-12) with the source's defaults otherwise.

Breaks: `while s < t_end - 1e-5` (data-dependent branching on a 0-d tensor), and
`float(error)` in `propose_step` (a device-to-host read).

HAND: none — the number of solver steps and the controller's state (`errs`, `h`, Python floats)
depend on the error values, and `info` (steps, nfe, n_accept, n_reject: Python ints read from the
data) is returned to the caller.
"""
import math

import torch
from torch import nn

KIND = "branch-while+float"


class PIDStepSizeController:
    """A PID controller for ODE adaptive step size control."""
    def __init__(self, h, pcoeff, icoeff, dcoeff, order=1, accept_safety=0.81, eps=1e-8):
        self.h = h
        self.b1 = (pcoeff + icoeff + dcoeff) / order
        self.b2 = -(pcoeff + 2 * dcoeff) / order
        self.b3 = dcoeff / order
        self.accept_safety = accept_safety
        self.eps = eps
        self.errs = []

    def limiter(self, x):
        return 1 + math.atan(x - 1)

    def propose_step(self, error):
        inv_error = 1 / (float(error) + self.eps)
        if not self.errs:
            self.errs = [inv_error, inv_error, inv_error]
        self.errs[0] = inv_error
        factor = self.errs[0] ** self.b1 * self.errs[1] ** self.b2 * self.errs[2] ** self.b3
        factor = self.limiter(factor)
        accept = factor >= self.accept_safety
        if accept:
            self.errs[2] = self.errs[1]
            self.errs[1] = self.errs[0]
        self.h *= factor
        return accept


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x, sigma):
        c = 1 / (sigma ** 2 + 1) ** 0.5
        return x * (1 - 0.1 * c[:, None, None, None]) + 0.5 * torch.tanh(self.conv(x))


class DPMSolver(nn.Module):
    """DPM-Solver. See https://arxiv.org/abs/2206.00927."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def t(self, sigma):
        return -sigma.log()

    def sigma(self, t):
        return t.neg().exp()

    def eps(self, eps_cache, key, x, t):
        if key in eps_cache:
            return eps_cache[key], eps_cache
        sigma = self.sigma(t) * x.new_ones([x.shape[0]])
        eps = (x - self.model(x, sigma)) / self.sigma(t)
        return eps, {key: eps, **eps_cache}

    def dpm_solver_1_step(self, x, t, t_next, eps_cache=None):
        eps_cache = {} if eps_cache is None else eps_cache
        h = t_next - t
        eps, eps_cache = self.eps(eps_cache, 'eps', x, t)
        x_1 = x - self.sigma(t_next) * h.expm1() * eps
        return x_1, eps_cache

    def dpm_solver_2_step(self, x, t, t_next, r1=1 / 2, eps_cache=None):
        eps_cache = {} if eps_cache is None else eps_cache
        h = t_next - t
        eps, eps_cache = self.eps(eps_cache, 'eps', x, t)
        s1 = t + r1 * h
        u1 = x - self.sigma(s1) * (r1 * h).expm1() * eps
        eps_r1, eps_cache = self.eps(eps_cache, 'eps_r1', u1, s1)
        x_2 = x - self.sigma(t_next) * h.expm1() * eps - self.sigma(t_next) / (2 * r1) * h.expm1() * (eps_r1 - eps)
        return x_2, eps_cache

    def dpm_solver_adaptive(self, x, t_start, t_end, order=3, rtol=0.05, atol=0.0078, h_init=0.05, pcoeff=0., icoeff=1., dcoeff=0., accept_safety=0.81):
        assert order in {2, 3}
        atol = torch.tensor(atol)
        rtol = torch.tensor(rtol)
        s = t_start
        x_prev = x
        pid = PIDStepSizeController(h_init, pcoeff, icoeff, dcoeff, order, accept_safety)
        info = {'steps': 0, 'nfe': 0, 'n_accept': 0, 'n_reject': 0}

        while s < t_end - 1e-5:
            eps_cache = {}
            t = torch.minimum(t_end, s + pid.h)
            x_low, eps_cache = self.dpm_solver_1_step(x, s, t, eps_cache=eps_cache)
            x_high, eps_cache = self.dpm_solver_2_step(x, s, t, eps_cache=eps_cache)
            delta = torch.maximum(atol, rtol * torch.maximum(x_low.abs(), x_prev.abs()))
            error = torch.linalg.norm((x_low - x_high) / delta) * x.numel() ** -(1 / 2)
            if pid.propose_step(error):
                x_prev = x_low
                x = x_high
                s = t
                info['n_accept'] += 1
            else:
                info['n_reject'] += 1
            info['nfe'] += order
            info['steps'] += 1

        return x, info


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.dpm_solver = DPMSolver(Denoiser())

    @torch.no_grad()
    def forward(self, x, sigma_min, sigma_max, rtol, h_init):
        """sample_dpm_adaptive(model, x, sigma_min, sigma_max, order=2, rtol=rtol, h_init=h_init, return_info=True)"""
        d = self.dpm_solver
        return d.dpm_solver_adaptive(x, d.t(sigma_max), d.t(sigma_min), 2, rtol, 0.0078, h_init)


def make():
    torch.manual_seed(0)
    return Sampler()


def inputs():
    torch.manual_seed(0)
    out = []
    for smin, smax, rtol, h_init in [(0.5, 2.0, 0.05, 0.05), (0.3, 3.0, 0.05, 1.5), (0.8, 1.2, 0.05, 0.05),
                                     (0.05, 20.0, 0.001, 3.0), (0.2, 5.0, 0.1, 0.05), (1.0, 1.0, 0.05, 0.05),
                                     (0.1, 10.0, 0.002, 4.0), (0.6, 2.5, 0.2, 0.5)]:
        x = torch.randn(2, 2, 4, 4) * smax
        out.append((x, torch.tensor(smin), torch.tensor(smax), rtol, h_init))
    return out
