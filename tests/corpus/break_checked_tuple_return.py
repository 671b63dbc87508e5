"""torchdiffeq's input checks, with the module's forward inputs of unknown kind: `_check_inputs`
opens with a call of `_check_timelike`, whose body opens by asserting `isinstance(timelike,
torch.Tensor)`, so `_check_inputs` returns only for a tensor `t`, and hands it back in a tuple.
After `y0, t = _check_inputs(y0, t)` the caller's `t` is a tensor: comparing its elements in
another function branches on tensor values."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["break_checked_tuple_return.py:Solver"]}


def _check_timelike(name, timelike):
    assert isinstance(timelike, torch.Tensor), name + " must be a tensor"


def _check_inputs(y0, t):
    _check_timelike("t", t)
    return y0, t


def _interp(t, t0, y0, y1):
    if t == t0:  # expect: GM101
        return y0
    return y0 + (t - t0) * (y1 - y0)


class Solver(torch.nn.Module):
    def forward(self, y0, t):
        y0, t = _check_inputs(y0, t)
        return _interp(t[1], t[0], y0, y0 + 1)


def sample():
    m = getattr(torch, "compile")(Solver())  # the call the configuration stands for
    return [(m, (torch.randn(3), t), {}) for t in (torch.tensor([0.0, 1.0, 2.0]), torch.tensor([1.0, 1.0]))]
