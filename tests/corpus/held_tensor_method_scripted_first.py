"""Near-identical to held_tensor_method_across_break, with the scripted update called first in the
loop: dynamo reaches it (a scripted function called from traced code is traced as Python) and its
`resize_as_` breaks there, in the loop, so dynamo skips the frame; the held method's call after it
is never traced (latent). The break in the plain helper called after that loop is reported: its
caller runs eagerly there, but a Python function gets a frame dynamo compiles on its own."""
import torch


@torch.jit.script
def update(beta, residual):
    beta.resize_as_(residual).copy_(residual)  # expect: GM527


def report(r):
    print("norm", r.norm())  # expect: GM301
    return r


def solve(op, rhs, beta, n_iter: int):
    if torch.is_tensor(op):
        op = op.matmul
    r = rhs - op(rhs)
    if r.norm() > 100:  # expect: GM101
        r = r * 0.5
    for _ in range(n_iter):
        update(beta, r)
        r = r - 0.1 * op(r)  # expect: GM529
    return report(r)


@torch.compile
def f(K, y, beta):
    return solve(K, y, beta, 3)


def sample():
    K = torch.eye(4) * 0.5
    return f, (K, torch.randn(4, 2), torch.empty(4, 2)), {}
