"""torchdiffeq's `_check_inputs` normalises its options before it calls `_check_timelike('t', t,
True)`, whose body opens by asserting `isinstance(timelike, torch.Tensor)`: the check is a
statement of the function's body that every return passes, after code that neither returns nor
rebinds `t`, so a call of `_check_inputs` that returns was handed a tensor `t`, and hands it back.
The caller's `t` is then a tensor: a `while` on its element breaks in the solver's step loop."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["break_checked_after_normalising.py:Solver"]}


def _check_timelike(name, timelike):
    assert isinstance(timelike, torch.Tensor), "{} must be a torch.Tensor".format(name)


def _check_inputs(y0, t, options):
    if options is None:
        options = {}
    else:
        options = options.copy()
    _check_timelike("t", t)
    return y0, t, options


def _advance(y, next_t, step):
    now = 0.0
    while next_t > now:  # expect: GM103
        y = y * 0.5
        now = now + step
    return y


class Solver(torch.nn.Module):
    def forward(self, y0, t, options=None):
        y0, t, options = _check_inputs(y0, t, options)
        return _advance(y0, t[1], 0.5)


def sample():
    m = getattr(torch, "compile")(Solver())  # the call the configuration stands for, out of the analysis's sight
    return [(m, (torch.randn(3), torch.tensor([0.0, 1.0])), {}), (m, (torch.randn(3), torch.tensor([0.0, 0.2])), {"options": {"a": 1}})]
