"""A local bound to one of two module-level functions, then called (nflows' spline CDF:
`spline_fn = rational_quadratic_spline` or `unconstrained_rational_quadratic_spline`, then
`spline_fn(inputs=..., **spline_kwargs)`): the call runs the chosen function, so its breaks are
the caller's."""
import torch


def bounded(x):
    if x.max() > 1:  # expect: GM101
        x = x / x.max()
    return x


def unbounded(x, tail_bound=1.0):
    inside = (x >= -tail_bound) & (x <= tail_bound)
    return x[inside]  # expect: GM402


@torch.compile
def f(x, tails=None):
    if tails is None:
        spline_fn = bounded
        spline_kwargs = {}
    else:
        spline_fn = unbounded
        spline_kwargs = {"tail_bound": 2.0}
    return spline_fn(x, **spline_kwargs)


def sample():
    return [(f, (torch.randn(5) * 3,), {}), (f, (torch.randn(5) * 3, "linear"), {})]
