"""A local function that calls `.log()` on its parameter says only what it is handed is a tensor:
not a dict it is handed a value of (`batch["sigma"]`: the dict's other values are Python numbers),
nor a parameter the function rebinds before handing it over (`sigmas = torch.tensor(sigmas)`),
nor anything handed to a local function that rebinds its own parameter to a tensor first. The
tests on `batch["steps"]` and on the list `sigmas` are Python values: no break."""
import torch
from torch import nn


def scale_by_key(x, batch):
    to_t = lambda sigma: sigma.log()  # noqa: E731
    if batch["steps"] == 0:
        return x
    return x * to_t(batch["sigma"])


def scale_rebound(x, sigmas):
    if sigmas[0] == 0:
        x = x + 1
    sigmas = torch.tensor(sigmas)
    to_t = lambda sigma: sigma.log()  # noqa: E731
    return x * to_t(sigmas[0])


def scale_converted_inside(x, sigmas):
    def to_t(sigma):
        sigma = torch.as_tensor(sigma)
        return sigma.log()

    if sigmas[1] == 0:
        x = x + 1
    return x * to_t(sigmas[0])


class Scaler(nn.Module):
    def forward(self, x, batch, sigmas):
        return scale_by_key(x, batch) + scale_rebound(x, sigmas) + scale_converted_inside(x, sigmas)


def sample():
    return [
        (Scaler(), (torch.ones(3), {"steps": steps, "sigma": torch.tensor(2.0)}, sigmas), {})
        for steps, sigmas in ((0, [0.0, 2.0]), (3, [3.0, 0.0]))
    ]
