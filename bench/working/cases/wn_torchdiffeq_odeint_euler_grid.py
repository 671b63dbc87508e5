"""torchdiffeq's `odeint` with a fixed-grid solver (method="euler", no step_size: the grid is the
requested times), as used by Neural ODE models (`examples/ode_demo.py`: `pred_y = odeint(func,
batch_y0, batch_t)` with an MLP `ODEFunc`): `_check_inputs` checks the times are strictly monotone,
negates times and dynamics when they decrease, then `FixedGridODESolver.integrate` steps over the grid
and, in a `while` loop, linearly interpolates the solution at each requested time passed.

Source: https://github.com/rtqichen/torchdiffeq/blob/657943acefa826ef04c025ebeb1ff5e9d60dc268/torchdiffeq/_impl/solvers.py
(`FixedGridODESolver.__init__/integrate/_linear_interp`),
https://github.com/rtqichen/torchdiffeq/blob/657943acefa826ef04c025ebeb1ff5e9d60dc268/torchdiffeq/_impl/misc.py
(`_check_inputs` time handling, `_check_timelike`, `_assert_increasing`, `_ReverseFunc`),
https://github.com/rtqichen/torchdiffeq/blob/657943acefa826ef04c025ebeb1ff5e9d60dc268/torchdiffeq/_impl/fixed_grid.py
(`Euler`), odeint.py (`odeint`). Reduced: tensor y0 only (no tuple state, options, event_fn, callbacks,
perturbation, norms; `callback_step` is a no-op as in the default func wrapper); a 2-16-2 MLP.

Breaks: `assert diff.all() or (~diff).all()` in `_check_timelike` (`or` on tensors),
`if len(t) > 1 and t[0] > t[1]:` (branch on a tensor), `assert (t[1:] > t[:-1]).all()` in
`_assert_increasing`, `assert time_grid[0] == t[0] and time_grid[-1] == t[-1]`,
`while j < len(t) and t1 >= t[j]:` (inside the for loop: frame skipped) and `if t == t0:` /
`if t == t1:` in `_linear_interp`, and the call `solver.integrate(t)` in `odeint` (8 sites).

HAND: the three asserts run in `torch.library.custom_op`s with an ORDERED effect (conditions combined
with `&`/`|` in the graph; same AssertionError and message on a non-monotone grid); the direction becomes a sign tensor `where(t[0] > t[1], -1, 1)`
that multiplies the times and the dynamics (exactly the negation of the source when reversed, a
multiplication by 1 otherwise); with the grid equal to the requested times and the times strictly
increasing (asserted just before by `_assert_increasing`), the `while` loop runs exactly once per step
with `t[j] == t1`, so `_linear_interp` returns `y1`: the rewrite stores `y1`. Removes every site.
"""
import torch
from torch import nn

KIND = "branch-while-assert"
GRAD = True


def _check_timelike(name, timelike, can_grad):
    assert isinstance(timelike, torch.Tensor), '{} must be a torch.Tensor'.format(name)
    assert timelike.ndimension() == 1, "{} must be one dimensional".format(name)
    if not can_grad:
        assert not timelike.requires_grad, "{} cannot require gradient".format(name)
    diff = timelike[1:] > timelike[:-1]
    assert diff.all() or (~diff).all(), '{} must be strictly increasing or decreasing'.format(name)


def _assert_increasing(name, t):
    assert (t[1:] > t[:-1]).all(), '{} must be strictly increasing or decreasing'.format(name)


class _ReverseFunc(torch.nn.Module):
    def __init__(self, base_func, mul=1.0):
        super(_ReverseFunc, self).__init__()
        self.base_func = base_func
        self.mul = mul

    def forward(self, t, y):
        return self.mul * self.base_func(-t, y)


def _check_inputs(func, y0, t):
    # Normalise time
    _check_timelike('t', t, True)
    t_is_reversed = False
    if len(t) > 1 and t[0] > t[1]:
        t_is_reversed = True

    if t_is_reversed:
        # Change the integration times to ascending order.
        # We do this by negating the time values and all associated arguments.
        t = -t

        # Ensure time values are un-negated when calling functions.
        func = _ReverseFunc(func, mul=-1.0)

    # Can only do after having normalised time
    _assert_increasing('t', t)
    return func, y0, t


class FixedGridODESolver:
    order: int

    def __init__(self, func, y0, step_size=None, grid_constructor=None, interp="linear", perturb=False):
        self.func = func
        self.y0 = y0
        self.dtype = y0.dtype
        self.device = y0.device
        self.step_size = step_size
        self.interp = interp
        self.perturb = perturb
        if step_size is None:
            if grid_constructor is None:
                self.grid_constructor = lambda f, y0, t: t
            else:
                self.grid_constructor = grid_constructor
        else:
            raise NotImplementedError("step_size grids are not part of this case")

    def integrate(self, t):
        time_grid = self.grid_constructor(self.func, self.y0, t)
        assert time_grid[0] == t[0] and time_grid[-1] == t[-1]

        solution = torch.empty(len(t), *self.y0.shape, dtype=self.y0.dtype, device=self.y0.device)
        solution[0] = self.y0

        j = 1
        y0 = self.y0
        for t0, t1 in zip(time_grid[:-1], time_grid[1:]):
            dt = t1 - t0
            dy, f0 = self._step_func(self.func, t0, dt, t1, y0)
            y1 = y0 + dy

            while j < len(t) and t1 >= t[j]:
                if self.interp == "linear":
                    solution[j] = self._linear_interp(t0, t1, y0, y1, t[j])
                else:
                    raise ValueError(f"Unknown interpolation method {self.interp}")
                j += 1
            y0 = y1

        return solution

    def _linear_interp(self, t0, t1, y0, y1, t):
        if t == t0:
            return y0
        if t == t1:
            return y1
        slope = (t - t0) / (t1 - t0)
        return y0 + slope * (y1 - y0)


class Euler(FixedGridODESolver):
    order = 1

    def _step_func(self, func, t0, dt, t1, y0):
        f0 = func(t0, y0)
        return dt * f0, f0


def odeint(func, y0, t):
    func, y0, t = _check_inputs(func, y0, t)
    solver = Euler(func=func, y0=y0)
    solution = solver.integrate(t)
    return solution


class ODEFunc(nn.Module):
    # torchdiffeq examples/ode_demo.py
    def __init__(self):
        super(ODEFunc, self).__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, t, y):
        return self.net(y ** 3)


class NeuralODE(nn.Module):
    def __init__(self):
        super().__init__()
        self.func = ODEFunc()

    def forward(self, y0, t):
        return odeint(self.func, y0, t)


def make():
    torch.manual_seed(0)
    return NeuralODE()


def inputs():
    g = torch.Generator().manual_seed(9)
    y = lambda *s: torch.randn(*s, generator=g) * 0.5
    return [
        (y(2), torch.linspace(0.0, 1.0, 5)),
        (y(3, 2), torch.tensor([0.0, 0.1, 0.35, 0.4, 1.0])),
        (y(2), torch.linspace(1.0, 0.0, 4)),                 # decreasing: reversed
        (y(4, 2), torch.tensor([2.0, 1.5, 0.2])),            # reversed, batch of states
        (y(2), torch.tensor([0.0, 0.5])),
        (y(1, 2), torch.tensor([-1.0, -0.5, 0.5, 2.0])),
        (y(2), torch.tensor([0.3, 0.2])),                     # reversed, one step
        (y(2, 2), torch.linspace(0.0, 2.0, 7)),
        (y(2), torch.tensor([0.0])),                          # a single time: no step
    ]


def failing_inputs():
    return [
        (torch.tensor([0.1, 0.2]), torch.tensor([0.0, 0.5, 0.3])),   # not monotone
        (torch.tensor([0.1, 0.2]), torch.tensor([1.0, 1.0, 2.0])),   # repeated time
    ]
