"""k-diffusion's DPM-Solver++(2M) sampler (`sample_dpmpp_2m`): the only sign that `sigmas` holds
tensors is that its elements go to local functions calling `.log()` on their parameter (a float has
no `.log`, and `Logger.log` needs a level and a message). An element of a tensor is a 0-d tensor, so
`sigmas[i + 1] == 0` is one and branching on it breaks, in the loop: dynamo skips the whole frame."""
import torch
from torch import nn


@torch.no_grad()
def sample_dpmpp_2m(x, sigmas):
    t_fn = lambda sigma: sigma.log().neg()  # noqa: E731 (as k-diffusion writes it)
    old = None
    for i in range(len(sigmas) - 1):
        t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
        if old is None or sigmas[i + 1] == 0:  # expect: GM101
            x = x * (t_next - t).exp()
        else:
            x = x * 0.5 + old * 0.5
        old = x
    return x


def sample_euler_nested(x, sigmas):
    def to_t(sigma):
        return sigma.log()

    for i in range(len(sigmas) - 1):
        x = x * to_t(sigmas[i])
        if sigmas[i + 1] == 0:  # expect: GM101
            x = x + 1
    return x


class Sampler(nn.Module):
    def forward(self, x, sigmas):
        return sample_dpmpp_2m(x, sigmas) + sample_euler_nested(x, sigmas)


def sample():
    return [(Sampler(), (torch.ones(3), torch.tensor(s)), {}) for s in ([3.0, 2.0, 0.0], [3.0, 2.0, 1.0])]
