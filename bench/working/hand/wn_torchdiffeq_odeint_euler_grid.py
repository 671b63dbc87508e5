"""Hand rewrite of cases/wn_torchdiffeq_odeint_euler_grid.py: the checks run in ordered custom ops
(same AssertionError and message), the direction is a sign tensor, and the interpolation loop stores
y1 (the grid is the strictly increasing requested times)."""
import torch
from torch import nn
from torch._library.effects import EffectType

_NS = "wn_torchdiffeq"


def _assert_eager(cond: torch.Tensor, msg: str) -> None:
    assert cond.item(), msg


if not hasattr(getattr(torch.ops, _NS), "assert_msg"):
    _op = torch.library.custom_op(f"{_NS}::assert_msg", _assert_eager, mutates_args=(), schema="(Tensor cond, str msg) -> ()")
    _op.register_fake(lambda cond, msg: None)
    _op.register_effect(EffectType.ORDERED)


def _assert_none(cond: torch.Tensor) -> None:
    assert cond.item()


if not hasattr(getattr(torch.ops, _NS), "assert_plain"):
    _op = torch.library.custom_op(f"{_NS}::assert_plain", _assert_none, mutates_args=(), schema="(Tensor cond) -> ()")
    _op.register_fake(lambda cond: None)
    _op.register_effect(EffectType.ORDERED)

KIND = "branch-while-assert"
GRAD = True


def _check_timelike(name, timelike, can_grad):
    assert isinstance(timelike, torch.Tensor), '{} must be a torch.Tensor'.format(name)
    assert timelike.ndimension() == 1, "{} must be one dimensional".format(name)
    if not can_grad:
        assert not timelike.requires_grad, "{} cannot require gradient".format(name)
    diff = timelike[1:] > timelike[:-1]
    torch.ops.wn_torchdiffeq.assert_msg(diff.all() | (~diff).all(), '{} must be strictly increasing or decreasing'.format(name))


def _assert_increasing(name, t):
    torch.ops.wn_torchdiffeq.assert_msg((t[1:] > t[:-1]).all(), '{} must be strictly increasing or decreasing'.format(name))


class _ReverseFunc(torch.nn.Module):
    def __init__(self, base_func, mul=1.0):
        super(_ReverseFunc, self).__init__()
        self.base_func = base_func
        self.mul = mul

    def forward(self, t, y):
        # `mul` is the sign tensor: base_func(sign * t) un-negates the times when reversed
        return self.mul * self.base_func(self.mul * t, y)


def _check_inputs(func, y0, t):
    # Normalise time
    _check_timelike('t', t, True)
    # the direction as a sign: -1 when the times decrease (the source negates the times and the
    # dynamics), +1 otherwise (a multiplication by 1)
    if len(t) > 1:
        sign = torch.where(t[0] > t[1], -1.0, 1.0).to(t.dtype)
        t = sign * t
        func = _ReverseFunc(func, mul=sign)
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
        torch.ops.wn_torchdiffeq.assert_plain((time_grid[0] == t[0]) & (time_grid[-1] == t[-1]))

        solution = torch.empty(len(t), *self.y0.shape, dtype=self.y0.dtype, device=self.y0.device)
        solution[0] = self.y0

        j = 1
        y0 = self.y0
        for t0, t1 in zip(time_grid[:-1], time_grid[1:]):
            dt = t1 - t0
            dy, f0 = self._step_func(self.func, t0, dt, t1, y0)
            y1 = y0 + dy

            # the grid is t and t is strictly increasing (asserted): exactly one requested time is
            # passed per step, t[j] == t1, where the linear interpolation returns y1
            if self.interp == "linear":
                solution[j] = y1
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
