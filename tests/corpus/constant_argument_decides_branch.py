"""A parameter every caller passes a constant (`square_dist=True`) or leaves at a constant
default: dynamo traces the Python constant and takes one branch, so a break in the arm it never
takes is not reached (GPyTorch's `covar_dist(..., square_dist=True)` never runs its `_dist` arm).
Where callers disagree (`scale` is passed True by one, False by the other), both arms are walked;
a parameter passed a name (`report(y, verbose)`) is not its default."""
import torch


def distance(x, y, square_dist=False, check=False):
    d = (x - y).pow(2).sum(-1)
    if check:
        print("checking", d.shape)
    if square_dist:
        return d
    if d.sum() > 0:
        d = d + 1e-6
    return d.sqrt()


def scaled(x, scale):
    if scale:
        print("scaling")  # expect: GM301
        return x * 2
    return x


@torch.compile
def f(x, y):
    return distance(x, y, square_dist=True) + scaled(x, True).sum()


def report(y, verbose=False):
    if verbose:
        print("report")  # expect: GM301
    return y


@torch.compile
def g(x, verbose):
    return report(scaled(x, False), verbose)


def sample():
    return [(f, (torch.randn(4, 3), torch.randn(4, 3)), {}), (g, (torch.randn(3), True), {})]
