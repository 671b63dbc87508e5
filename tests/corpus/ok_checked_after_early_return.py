"""The same input checks with a `return` before the check: a call may return without checking `t`
(here, whenever options are given), so the call says nothing of `t`. The solver is handed a list of
floats there: `next_t > now` compares Python numbers, and dynamo does not break."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["ok_checked_after_early_return.py:Solver"]}


def _check_timelike(name, timelike):
    assert isinstance(timelike, torch.Tensor), "{} must be a torch.Tensor".format(name)


def _check_inputs(y0, t, options):
    if options is not None:
        return y0, t, options.copy()
    _check_timelike("t", t)
    return y0, t, {}


def _advance(y, next_t, step):
    now = 0.0
    while next_t > now:
        y = y * 0.5
        now = now + step
    return y


class Solver(torch.nn.Module):
    def forward(self, y0, t, options=None):
        y0, t, options = _check_inputs(y0, t, options)
        return _advance(y0, t[1], 0.5)


def sample():
    m = getattr(torch, "compile")(Solver())  # the call the configuration stands for, out of the analysis's sight
    return [(m, (torch.randn(3), [0.0, 1.0]), {"options": {"a": 1}}), (m, (torch.randn(3), [0.0, 0.2]), {"options": {}})]
