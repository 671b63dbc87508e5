"""An instance made from a module-level registry of classes (`SOLVERS[method](...)`, torchdiffeq's
`odeint`) is followed into its methods, and an inherited method's `self.<method>(...)` calls reach
the subclass's overrides: the base's `integrate` calls `_advance`, which only the subclass defines."""
import torch


class Solver:
    def __init__(self, y0):
        self.y0 = y0

    def integrate(self, t):
        return self._advance(t)


class EulerSolver(Solver):
    def _advance(self, t):
        if t[-1] > t[0]:  # expect: GM101
            return self.y0 * 2
        return self.y0


SOLVERS = {"euler": EulerSolver}


def odeint(y0, t, method="euler"):
    solver = SOLVERS[method](y0)
    return solver.integrate(t)  # expect: GM528


@torch.compile
def forward(y0, t):
    return odeint(y0 + 1, t)


def sample():
    return [(forward, (torch.randn(3), torch.tensor([0.0, 1.0])), {}), (forward, (torch.randn(3), torch.tensor([1.0, 0.0])), {})]
