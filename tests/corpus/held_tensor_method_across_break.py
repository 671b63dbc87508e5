"""A tensor's bound method held in a local (`op = K.matmul`, linear_operator's `linear_cg` taking a
matrix or a callable) is traced while dynamo knows the tensor it came from; after a break, the
resume function receives it as an input, a builtin dynamo does not trace (GB0007). In the loop it
makes dynamo skip the frame, so the scripted update after it is never traced: called from eager
code, a TorchScript function runs with no Python frame (its `resize_as_` breaks only once the call
above is fixed). Calling the method on the tensor itself after the break is traced."""
import torch


@torch.jit.script
def update(beta, residual):
    beta.resize_as_(residual).copy_(residual)  # expect: GM527


def solve(op, rhs, beta, n_iter: int):
    if torch.is_tensor(op):
        op = op.matmul
    elif not callable(op):
        raise RuntimeError("op must be a tensor or a callable")
    r = rhs - op(rhs)
    if r.norm() > 100:  # expect: GM101
        r = r * 0.5
    for _ in range(n_iter):
        r = r - 0.1 * op(r)  # expect: GM529
        update(beta, r)
    return r


def direct(K, rhs):
    r = rhs - K.matmul(rhs)
    if r.norm() > 100:  # expect: GM101
        r = r * 0.5
    for _ in range(2):
        r = r - 0.1 * K.matmul(r)
    return r


@torch.compile
def f(K, y, beta):
    return solve(K, y, beta, 3)


@torch.compile
def g(K, y):
    return direct(K, y)


def sample():
    K = torch.eye(4) * 0.5
    return [(f, (K, torch.randn(4, 2), torch.empty(4, 2)), {}), (g, (K, torch.randn(4, 2)), {})]
