"""A call that does not make the caller's local a tensor: the helper rebinds its parameter before
asserting on it. With `t` a list of floats, `t[0] > t[1]` is a Python comparison: no break."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["ok_checked_helper_not_narrowing.py:Solver"]}


def _as_times(t):
    t = torch.as_tensor(t)
    assert isinstance(t, torch.Tensor), "t must be a tensor"


def solve(y0, t):
    _as_times(t)
    if len(t) > 1 and t[0] > t[1]:
        y0 = -y0
    return y0 * 2


class Solver(torch.nn.Module):
    def forward(self, y0, t):
        return solve(y0, t)


def sample():
    m = getattr(torch, "compile")(Solver())  # the call the configuration stands for
    return [(m, (torch.randn(3), t), {}) for t in ([0.0, 1.0], [2.0, 1.0])]
