"""Hand rewrite of wx_linop_linear_cg (see the case file for the source).

HAND: the NaN check and the NumericalWarning are torch.library.custom_ops with an ORDERED effect (same
RuntimeError text; same warning text/count, formatting the real mean-residual tensor); the "already solved"
skip and the tolerance `break` become a 0-d `stop` flag: the loop always runs n_iter steps, and once stopped
the CG state (result, residual, conjugate vector, inner products, residual norm) is kept with torch.where,
which gives the same result. The no-preconditioner update helpers are written out-of-place.
"""
import warnings

import torch
from torch import Tensor
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op

KIND = "convergence loop break + NaN check + warning"

bool_compat = torch.bool


class NumericalWarning(RuntimeWarning):
    """Warning thrown when convergence criteria are not met, or when comptuations require extra stability."""
    pass


class _Value:
    def __init__(self, value):
        self._value = value

    def value(self):
        return self._value

    def on(self):
        return bool(self._value)


class settings:
    max_cg_iterations = _Value(1000)
    max_lanczos_quadrature_iterations = _Value(20)
    cg_tolerance = _Value(1)
    terminate_cg_by_size = _Value(False)
    verbose_linalg = _Value(False)


@torch.library.custom_op("wx_linop_cg::check_nan", mutates_args=(), tags=(torch.Tag.nondeterministic_seeded,))
def _check_nan(residual: Tensor) -> None:
    if not torch.equal(residual, residual):
        raise RuntimeError("NaNs encountered when trying to perform matrix-vector multiplication")


@_check_nan.register_fake
def _(residual):
    return None


@torch.library.custom_op("wx_linop_cg::warn_not_reached", mutates_args=(), tags=(torch.Tag.nondeterministic_seeded,))
def _warn_not_reached(not_reached: Tensor, mean_residual_norm: Tensor, n_iter: int, tolerance: float) -> None:
    if bool(not_reached):
        warnings.warn(
            "CG terminated in {} iterations with average residual norm {}"
            " which is larger than the tolerance of {} specified by"
            " linear_operator.settings.cg_tolerance."
            " If performance is affected, consider raising the maximum number of CG iterations by running code in"
            " a linear_operator.settings.max_cg_iterations(value) context.".format(
                n_iter, mean_residual_norm, tolerance
            ),
            NumericalWarning,
        )


@_warn_not_reached.register_fake
def _(not_reached, mean_residual_norm, n_iter, tolerance):
    return None


_register_effectful_op(torch.ops.wx_linop_cg.check_nan.default, _EffectType.ORDERED)
_register_effectful_op(torch.ops.wx_linop_cg.warn_not_reached.default, _EffectType.ORDERED)


def _default_preconditioner(x):
    return x.clone()


def linear_cg(
    matmul_closure,
    rhs,
    n_tridiag=0,
    tolerance=None,
    eps=1e-10,
    stop_updating_after=1e-10,
    max_iter=None,
    max_tridiag_iter=None,
    initial_guess=None,
    preconditioner=None,
):
    # Unsqueeze, if necesasry
    is_vector = rhs.ndimension() == 1
    if is_vector:
        rhs = rhs.unsqueeze(-1)

    # Some default arguments
    if max_iter is None:
        max_iter = settings.max_cg_iterations.value()
    if max_tridiag_iter is None:
        max_tridiag_iter = settings.max_lanczos_quadrature_iterations.value()
    if initial_guess is None:
        initial_guess = torch.zeros_like(rhs)
    if tolerance is None:
        tolerance = settings.cg_tolerance.value()
    if preconditioner is None:
        preconditioner = _default_preconditioner
        precond = False
    else:
        precond = True

    # If we are running m CG iterations, we obviously can't get more than m Lanczos coefficients
    if max_tridiag_iter > max_iter:
        raise RuntimeError("Getting a tridiagonalization larger than the number of CG iterations run is not possible!")

    # Check matmul_closure object
    if torch.is_tensor(matmul_closure):
        matmul_closure = matmul_closure.matmul
    elif not callable(matmul_closure):
        raise RuntimeError("matmul_closure must be a tensor, or a callable object!")

    # Get some constants
    num_rows = rhs.size(-2)
    n_iter = min(max_iter, num_rows) if settings.terminate_cg_by_size.on() else max_iter
    n_tridiag_iter = min(max_tridiag_iter, num_rows)
    eps = torch.tensor(eps, dtype=rhs.dtype, device=rhs.device)

    # Get the norm of the rhs - used for convergence checks
    # Here we're going to make almost-zero norms actually be 1 (so we don't get divide-by-zero issues)
    # But we'll store which norms were actually close to zero
    rhs_norm = rhs.norm(2, dim=-2, keepdim=True)
    rhs_is_zero = rhs_norm.lt(eps)
    rhs_norm = rhs_norm.masked_fill_(rhs_is_zero, 1)

    # Let's normalize. We'll un-normalize afterwards
    rhs = rhs.div(rhs_norm)

    # residual: residual_{0} = b_vec - lhs x_{0}
    residual = rhs - matmul_closure(initial_guess)
    batch_shape = residual.shape[:-2]

    # result <- x_{0}
    result = initial_guess.expand_as(residual).contiguous()

    # Maybe log
    if settings.verbose_linalg.on():
        settings.verbose_linalg.logger.debug(
            f"Running CG on a {rhs.shape} RHS for {n_iter} iterations (tol={tolerance}). Output: {result.shape}."
        )

    # Check for NaNs
    _check_nan(residual)

    # Sometime we're lucky and the preconditioner solves the system right away
    # Check for convergence
    residual_norm = residual.norm(2, dim=-2, keepdim=True)
    has_converged = torch.lt(residual_norm, stop_updating_after)

    # "Skip the iteration!" when everything has converged already (n_tridiag == 0 here)
    stop = has_converged.all()
    skipped = stop

    # precon_residual{0} = M^-1 residual_{0}
    precond_residual = preconditioner(residual)
    curr_conjugate_vec = precond_residual
    residual_inner_prod = precond_residual.mul(residual).sum(-2, keepdim=True)

    tolerance_reached = torch.zeros((), dtype=torch.bool, device=rhs.device)

    # Start the iteration
    for k in range(n_iter):
        mvms = matmul_closure(curr_conjugate_vec)
        if precond:
            raise NotImplementedError  # preconditioned branch omitted in this reduction

        # _jit_linear_cg_updates_no_precond, out of place
        alpha = torch.sum(curr_conjugate_vec * mvms, dim=-2, keepdim=True)
        is_zero = torch.lt(alpha, eps)
        alpha = alpha.masked_fill(is_zero, 1)
        alpha = torch.div(residual_inner_prod, alpha)
        alpha = alpha.masked_fill(is_zero, 0)
        alpha = alpha.masked_fill(has_converged, 0)
        new_residual = torch.addcmul(residual, -alpha, mvms)
        new_precond_residual = new_residual.clone()

        # _jit_linear_cg_updates, out of place
        new_result = torch.addcmul(result, alpha, curr_conjugate_vec)
        beta = residual_inner_prod
        new_residual_inner_prod = torch.sum(new_residual * new_precond_residual, -2, keepdim=True)
        is_zero = torch.lt(beta, eps)
        beta = beta.masked_fill(is_zero, 1)
        beta = torch.div(new_residual_inner_prod, beta)
        beta = beta.masked_fill(is_zero, 0)
        new_conjugate_vec = (curr_conjugate_vec * beta) + new_precond_residual

        new_residual_norm = torch.norm(new_residual, 2, dim=-2, keepdim=True)
        new_residual_norm = new_residual_norm.masked_fill(rhs_is_zero, 0)
        new_has_converged = torch.lt(new_residual_norm, stop_updating_after)

        # keep the state once CG has stopped (the source breaks out of the loop)
        result = torch.where(stop, result, new_result)
        residual = torch.where(stop, residual, new_residual)
        curr_conjugate_vec = torch.where(stop, curr_conjugate_vec, new_conjugate_vec)
        residual_inner_prod = torch.where(stop, residual_inner_prod, new_residual_inner_prod)
        residual_norm = torch.where(stop, residual_norm, new_residual_norm)
        has_converged = torch.where(stop, has_converged, new_has_converged)

        if k >= min(10, max_iter - 1):
            reached_now = torch.logical_and(torch.logical_not(stop), residual_norm.mean() < tolerance)
            tolerance_reached = torch.logical_or(tolerance_reached, reached_now)
            stop = torch.logical_or(stop, reached_now)

    # Un-normalize
    result = result.mul(rhs_norm)

    if n_iter > 0:
        # the source warns with k + 1 == n_iter here (the loop ran to the end)
        _warn_not_reached(torch.logical_not(torch.logical_or(tolerance_reached, skipped)),
                          residual_norm.mean(), n_iter, tolerance)

    if is_vector:
        result = result.squeeze(-1)

    return result


def gp_solve(train_x, train_y, lengthscale, noise, tolerance, max_iter):
    """K^-1 y for an RBF-kernel exact GP, as used by the marginal log likelihood."""
    dist = (train_x.unsqueeze(-2) - train_x.unsqueeze(-3)).pow(2).sum(-1)
    K = torch.exp(-0.5 * dist / lengthscale ** 2) + noise * torch.eye(train_x.size(-2), dtype=train_x.dtype)
    return linear_cg(K, train_y, tolerance=tolerance, max_iter=max_iter,
                     max_tridiag_iter=min(max_iter, settings.max_lanczos_quadrature_iterations.value()))


def make():
    torch.manual_seed(0)
    return gp_solve


def inputs():
    g = torch.Generator().manual_seed(0)
    out = []
    # (n, batch, rhs cols or None for vector, lengthscale, noise, tolerance, max_iter)
    specs = [
        (6, (), 1, 1.0, 1.0, 1e-2, 20),     # well conditioned, converges -> break at k=10
        (6, (), None, 1.0, 1.0, 1e-2, 20),  # vector rhs
        (8, (2,), 2, 0.7, 0.5, 1e-2, 15),   # batched
        (8, (), 2, 2.0, 1e-4, 1e-6, 4),     # ill conditioned, few iterations -> warning
        (5, (), 1, 1.0, 0.1, 1.0, 20),      # default-like tolerance
        (7, (), 3, 3.0, 1e-3, 1e-8, 6),     # no convergence -> warning
        (4, (), 1, 1.0, 1.0, 1e-3, 12),
        (6, (3,), 1, 0.5, 0.2, 1e-3, 25),
    ]
    for n, bs, cols, ls, noise, tol, mi in specs:
        x = torch.randn(*bs, n, 2, generator=g, dtype=torch.float64)
        if cols is None:
            y = torch.randn(n, generator=g, dtype=torch.float64)
        else:
            y = torch.randn(*bs, n, cols, generator=g, dtype=torch.float64)
        out.append((x, y, ls, noise, tol, mi))
    # already solved (zero right-hand side): the iteration is skipped
    out.append((torch.randn(5, 2, generator=g, dtype=torch.float64), torch.zeros(5, 2, dtype=torch.float64),
                1.0, 1.0, 1e-2, 20))
    return out


def failing_inputs():
    g = torch.Generator().manual_seed(1)
    y = torch.randn(5, 1, generator=g, dtype=torch.float64)
    y[2, 0] = float("nan")
    return [(torch.randn(5, 2, generator=g, dtype=torch.float64), y, 1.0, 1.0, 1e-2, 20)]
