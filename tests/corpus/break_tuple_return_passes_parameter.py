"""A helper that hands its parameters back in a tuple (torchdiffeq's `_check_inputs` ends
`return func, y0, t`, after `if reversed: t = -t`): the caller's names get back the kinds it
passed, so `t` is still a tensor where the solver compares its elements. `n` comes back rebound
to a Python int, so testing it does not break."""
import torch

GRAPHMEND_CONFIG = {"compiled": ["break_tuple_return_passes_parameter.py:solve"]}


def _check_inputs(y0, t, n):
    if n > 3:
        t = -t
    n = len(t)
    return y0, t, n


def _interp(t, t0, y0, y1):
    if t == t0:  # expect: GM101
        return y0
    return y0 + (t - t0) * (y1 - y0)


def solve(y0, t):
    y0, t, n = _check_inputs(y0, t, 4)
    if n > 2:
        y0 = y0 * 2
    return _interp(t[1], t[0], y0, y0 + 1)


def sample():
    m = getattr(torch, "compile")(solve)  # the call the configuration stands for
    return [(m, (torch.randn(3), t), {}) for t in (torch.tensor([0.0, 1.0, 2.0]), torch.tensor([1.0, 1.0]))]
