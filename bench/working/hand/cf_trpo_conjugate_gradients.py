"""Hand rewrite of cases/cf_trpo_conjugate_gradients.py: all nsteps iterations run, frozen once converged."""
import torch
from torch import nn

KIND = "branch-loop"


def conjugate_gradients(Avp, b, nsteps, residual_tol=1e-10):
    x = torch.zeros(b.size())
    r = b.clone()
    p = b.clone()
    rdotr = torch.dot(r, r)
    done = torch.zeros((), dtype=torch.bool)
    for i in range(nsteps):
        # once converged (the source breaks), keep the state unchanged
        _Avp = Avp(p)
        alpha = rdotr / torch.dot(p, _Avp)
        x = torch.where(done, x, x + alpha * p)
        r_new = r - alpha * _Avp
        new_rdotr = torch.dot(r_new, r_new)
        betta = new_rdotr / rdotr
        p = torch.where(done, p, r_new + betta * p)
        r = torch.where(done, r, r_new)
        rdotr = torch.where(done, rdotr, new_rdotr)
        done = done | (rdotr < residual_tol)
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
