"""A helper that asserts its argument is a tensor (torchdiffeq's `_check_timelike(name, timelike,
can_grad)`: `assert isinstance(timelike, torch.Tensor)`) returns only when it is: after the call
the caller's local is a tensor, so branching on its values breaks (GM101). The solver is named as
compiled in the configuration (its `torch.compile` call is elsewhere), so its inputs have no kind
of their own."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["break_param_checked_by_helper.py:Solver"]}


def _check_timelike(name, timelike):
    assert isinstance(timelike, torch.Tensor), "{} must be a torch.Tensor".format(name)
    assert timelike.ndimension() == 1, "{} must be one dimensional".format(name)


def _check_inputs(y0, t):
    _check_timelike("t", t)
    if len(t) > 1 and t[0] > t[1]:  # expect: GM101
        t = -t
    return y0, t


def odeint(func, y0, t):
    y0, t = _check_inputs(y0, t)
    return func(y0), t


class Solver(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.func = torch.nn.Tanh()

    def forward(self, y0, t):
        return odeint(self.func, y0, t)


def sample():
    m = getattr(torch, "compile")(Solver())  # the call the configuration stands for, out of the analysis's sight
    return [(m, (torch.randn(3), torch.tensor(t)), {}) for t in ([0.0, 1.0, 2.0], [2.0, 1.0, 0.0])]
