"""A module helper that tests the type of what it is given (`isinstance(v, torch.Tensor)`) is meant
to take Python numbers too: handing it `sigmas[i]` says nothing of `sigmas`, here a list of floats,
so `sigmas[i] == 0` is a Python bool dynamo evaluates while tracing. A callable parameter that
shadows a module helper's name (`to_d`) runs whatever the caller passes. No break."""
import torch
from torch import nn


def to_d(x, sigma, denoised):
    return (x - denoised) / sigma.exp()


def as_scale(v):
    return v.exp() if isinstance(v, torch.Tensor) else 2.0**v


def sample_scaled(x, sigmas):
    for i in range(len(sigmas) - 1):
        if sigmas[i] == 0:
            x = x + 1
        x = x * as_scale(sigmas[i])
    return x


def sample_with_step(x, sigmas, to_d):
    for i in range(len(sigmas) - 1):
        if sigmas[i + 1] == 0:
            x = x + 1
        x = to_d(x, sigmas[i], x * 0.5)
    return x


class Sampler(nn.Module):
    def forward(self, x, sigmas):
        return sample_scaled(x, sigmas) + sample_with_step(x, sigmas, lambda x, sigma, denoised: x - denoised * sigma)


def sample():
    return [(Sampler(), (torch.ones(3), s), {}) for s in ([3.0, 2.0, 0.0], [0.0, 2.0, 1.0])]
