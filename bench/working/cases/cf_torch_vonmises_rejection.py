"""`torch.distributions.VonMises.sample`: Best & Fisher's rejection sampler loops
`while not done.all():` and only updates when `if accept.any():`, both on tensor values.

Source: https://github.com/pytorch/pytorch/blob/main/torch/distributions/von_mises.py
(`_rejection_sample`, `VonMises._proposal_r`, `VonMises.sample`; the `@torch.jit.script_if_tracing`
decorator, a no-op outside tracing, is dropped). The compiled callable is `sample(loc, concentration,
n)` doing what `VonMises(loc, concentration).sample((n,))` does.

Breaks: `while not done.all()` and `if accept.any()` (data-dependent branching).

HAND: partial — drop the `if accept.any():` test (when nothing is accepted, the `torch.where` and
`done | accept` leave `x` and `done` unchanged). The `while` stays: the number of rounds, and so how
many uniforms are drawn from the global generator, depends on the values, and a `torch.while_loop`
would need the RNG inside its body.
"""
import math

import torch

KIND = "branch-while"


def _rejection_sample(loc, concentration, proposal_r, x):
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not done.all():
        u = torch.rand((3,) + x.shape, dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


def _proposal_r(kappa):
    tau = 1 + (1 + 4 * kappa**2).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    _proposal_r = (1 + rho**2) / (2 * rho)
    # second order Taylor expansion around 0 for small kappa
    _proposal_r_taylor = 1 / kappa + kappa
    return torch.where(kappa < 1e-5, _proposal_r_taylor, _proposal_r)


@torch.no_grad()
def sample(loc, concentration, n):
    """VonMises(loc, concentration).sample((n,))"""
    loc, concentration = torch.broadcast_tensors(loc, concentration)
    _loc = loc.double()
    _concentration = concentration.double()
    shape = torch.Size((n,)) + loc.shape
    x = torch.zeros(shape, dtype=_loc.dtype, device=loc.device)
    return _rejection_sample(_loc, _concentration, _proposal_r(_concentration), x).to(loc.dtype)


def make():
    return sample


def inputs():
    torch.manual_seed(0)
    return [
        (torch.tensor([0.0]), torch.tensor([1.0]), 4),
        (torch.tensor([0.5, -1.0]), torch.tensor([0.1, 10.0]), 8),
        (torch.zeros(3), torch.tensor([1e-6, 1.0, 100.0]), 2),
        (torch.tensor(3.0), torch.tensor(2.0), 16),
        (torch.randn(2, 2), torch.rand(2, 2) * 5 + 0.1, 3),
        (torch.tensor([1.0]), torch.tensor([50.0]), 1),
        (torch.tensor([-3.0, 3.0]), torch.tensor([0.5]), 32),
        (torch.randn(4), torch.tensor(0.01), 5),
    ]
