"""The same samplers handed a Python list of floats: the local functions get `math.log` of an
element, or a tensor built from one (`torch.tensor(sigmas[i])`), so nothing says `sigmas` holds
tensors, and `sigmas[i + 1] == 0` is a Python bool dynamo evaluates while tracing: no break."""
import math

import torch
from torch import nn


def sample_dpmpp_2m(x, sigmas):
    t_fn = lambda sigma: -math.log(sigma)  # noqa: E731
    old = None
    for i in range(len(sigmas) - 1):
        t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
        if old is None or sigmas[i + 1] == 0:
            x = x * math.exp(t_next - t)
        else:
            x = x * 0.5 + old * 0.5
        old = x
    return x


def sample_euler_wrapped(x, sigmas):
    to_t = lambda sigma: sigma.log()  # noqa: E731
    for i in range(len(sigmas) - 1):
        x = x * to_t(torch.tensor(sigmas[i]))
        if sigmas[i + 1] == 0:
            x = x + 1
    return x


class Sampler(nn.Module):
    def forward(self, x, sigmas):
        return sample_dpmpp_2m(x, sigmas) + sample_euler_wrapped(x, sigmas)


def sample():
    return [(Sampler(), (torch.ones(3), s), {}) for s in ([3.0, 2.0, 0.5], [3.0, 2.0, 1.0])]
