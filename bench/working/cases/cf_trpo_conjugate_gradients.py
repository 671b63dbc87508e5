"""TRPO's conjugate-gradient solve for the natural-gradient step stops early with
`if rdotr < residual_tol: break` on a 0-d tensor.

Source: https://github.com/ikostrikov/pytorch-trpo/blob/master/trpo.py (`conjugate_gradients`,
`Fvp` in `trpo_step`; the same function is in many TRPO/ACKTR ports). The Fisher-vector product is
reduced to a damped product with a fixed symmetric positive-definite matrix (a buffer).

Breaks: `if rdotr < residual_tol: break` (data-dependent branching, in the loop).

HAND: the loop runs all `nsteps` iterations and, once the residual is below tolerance, keeps `x`,
`r`, `p` and `rdotr` unchanged (`torch.where(done, old, new)` with `done` carried as a 0-d bool
tensor), which gives the same `x` as breaking.
"""
import torch
from torch import nn

KIND = "branch-loop"


def conjugate_gradients(Avp, b, nsteps, residual_tol=1e-10):
    x = torch.zeros(b.size())
    r = b.clone()
    p = b.clone()
    rdotr = torch.dot(r, r)
    for i in range(nsteps):
        _Avp = Avp(p)
        alpha = rdotr / torch.dot(p, _Avp)
        x += alpha * p
        r -= alpha * _Avp
        new_rdotr = torch.dot(r, r)
        betta = new_rdotr / rdotr
        p = r + betta * p
        rdotr = new_rdotr
        if rdotr < residual_tol:
            break
    return x


class TRPOStep(nn.Module):
    def __init__(self, n=6, damping=1e-1):
        super().__init__()
        a = torch.randn(n, n)
        self.register_buffer("fisher", a @ a.t() / n)
        self.damping = damping

    def Fvp(self, v):
        return self.fisher @ v + v * self.damping

    def forward(self, loss_grad, nsteps, residual_tol):
        stepdir = conjugate_gradients(self.Fvp, -loss_grad, nsteps, residual_tol)
        shs = 0.5 * (stepdir * self.Fvp(stepdir)).sum(0, keepdim=True)
        return stepdir, shs


def make():
    torch.manual_seed(0)
    return TRPOStep()


def inputs():
    torch.manual_seed(0)
    g = lambda: torch.randn(6)
    return [
        (g(), 10, 1e-10),
        (g(), 10, 1e-2),
        (g(), 3, 1e-10),
        (g() * 100, 10, 1e-4),
        (g() * 1e-3, 10, 1e-6),     # below tolerance after the first iteration
        (g(), 1, 1e-10),
        (g(), 20, 1e-8),
        (torch.zeros(6).index_fill_(0, torch.tensor([2]), 1.0), 10, 1e-10),
    ]
