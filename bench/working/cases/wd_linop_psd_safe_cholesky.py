"""linear_operator's (GPyTorch's) `psd_safe_cholesky`: `torch.linalg.cholesky_ex`, and when any batch
element fails, a NaN check that raises `NanError`, then up to `max_tries` retries that add growing
jitter to the diagonal of the failed elements only, each with a `NumericalWarning`, and a
`NotPSDError` when every retry fails. It runs inside every exact-GP marginal likelihood and BoTorch
posterior.

Source: https://github.com/cornellius-gp/linear_operator/blob/main/linear_operator/utils/cholesky.py
(`_psd_safe_cholesky`, `psd_safe_cholesky`); the control flow that keeps it from compiling is the
subject of https://github.com/cornellius-gp/linear_operator/pull/27 (adds `settings.trace_mode` to
skip "PSD check / jitter in `linear_operator.utils.cholesky`" for ahead-of-time compilation), and the
warning is the one in https://github.com/meta-pytorch/botorch/issues/1679. Settings are reduced to
their defaults (jitter 1e-6 for float32, 1e-8 for float64, 3 tries, verbose_linalg and trace_mode off);
`out=` is not used.

Breaks: `if settings.trace_mode.on() or not torch.any(info)` and `if not torch.any(info)` in the loop
(data-dependent branching), `isnan.any()` / `isnan.sum().item()` on the error path, and the
`warnings.warn` in the retry loop.

HAND: every retry is computed unconditionally (once every element succeeds, `info > 0` is all False,
so later retries add exactly 0 and return the same `L`), and a `torch.library.custom_op` with an
ORDERED effect replays the original decisions on the `info` of each attempt: it emits the same
warnings (same text and count) and raises the same `NanError` / `NotPSDError`.
"""
import warnings

import torch

KIND = "branch+warn"
GRAD = True


class NanError(RuntimeError):
    pass


class NotPSDError(RuntimeError):
    pass


class NumericalWarning(RuntimeWarning):
    pass


class _Flag:
    def __init__(self, on):
        self._on = on

    def on(self):
        return self._on


class _Jitter:
    def value(self, dtype):
        return 1e-8 if dtype == torch.float64 else 1e-6


class _MaxTries:
    def value(self):
        return 3


class settings:
    verbose_linalg = _Flag(False)
    trace_mode = _Flag(False)
    cholesky_jitter = _Jitter()
    cholesky_max_tries = _MaxTries()


def _psd_safe_cholesky(A, out=None, jitter=None, max_tries=None):
    if out is not None:
        out = (out, torch.empty(A.shape[:-2], dtype=torch.int32, device=out.device))

    L, info = torch.linalg.cholesky_ex(A, out=out)
    if settings.trace_mode.on() or not torch.any(info):
        return L

    isnan = torch.isnan(A)
    if isnan.any():
        raise NanError(f"cholesky_cpu: {isnan.sum().item()} of {A.numel()} elements of the {A.shape} tensor are NaN.")

    if jitter is None:
        jitter = settings.cholesky_jitter.value(A.dtype)
    if max_tries is None:
        max_tries = settings.cholesky_max_tries.value()
    Aprime = A.clone()
    jitter_prev = 0
    for i in range(max_tries):
        jitter_new = jitter * (10**i)
        # add jitter only where needed
        diag_add = ((info > 0) * (jitter_new - jitter_prev)).unsqueeze(-1).expand(*Aprime.shape[:-1])
        Aprime.diagonal(dim1=-1, dim2=-2).add_(diag_add)
        jitter_prev = jitter_new
        warnings.warn(
            f"A not p.d., added jitter of {jitter_new:.1e} to the diagonal",  # noqa: E231
            NumericalWarning,
        )
        L, info = torch.linalg.cholesky_ex(Aprime, out=out)
        if not torch.any(info):
            return L
    raise NotPSDError(
        f"Matrix not positive definite after repeatedly adding jitter up to {jitter_new:.1e}."  # noqa: E231
    )


def psd_safe_cholesky(A, upper=False, out=None, jitter=None, max_tries=None):
    L = _psd_safe_cholesky(A, out=out, jitter=jitter, max_tries=max_tries)
    if upper:
        if out is not None:
            out = out.transpose_(-1, -2)
        else:
            L = L.mT
    return L


def make():
    return psd_safe_cholesky


def _with_eig(eigs, seed):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(len(eigs), len(eigs), generator=g, dtype=torch.float64))
    return q @ torch.diag(torch.tensor(eigs, dtype=torch.float64)) @ q.T


def inputs():
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    pd32 = x @ x.T + torch.eye(4)
    pd64 = torch.randn(2, 3, 3, dtype=torch.float64)
    pd64 = pd64 @ pd64.mT + 0.5 * torch.eye(3, dtype=torch.float64)
    mixed = torch.stack([_with_eig([1.0, 2.0, 3.0], 1), _with_eig([1.0, 0.5, -5e-8], 2)])
    return [
        (pd32,),                                         # p.d.: first attempt succeeds
        (pd64, True),                                    # batch, upper
        (torch.ones(3, 3),),                             # p.s.d. rank 1: one retry (float32 jitter)
        (torch.ones(3, 3, dtype=torch.float64), True),   # p.s.d., float64, upper
        (_with_eig([1.0, 2.0, -5e-8], 3),),              # needs the second retry (1e-7)
        (_with_eig([1.0, 2.0, -5e-7], 4),),              # needs the third retry (1e-6)
        (mixed,),                                        # only the failed batch element gets jitter
        (_with_eig([2.0, 1.0, 0.0, 3.0], 5), False, None, 1e-4),  # explicit jitter
    ]


def failing_inputs():
    nan = torch.eye(3, dtype=torch.float64)
    nan[1, 1] = float("nan")
    return [
        (nan,),                                          # NanError
        (_with_eig([1.0, 2.0, -1e-3], 6),),              # NotPSDError after 3 retries
        (-torch.eye(2),),                                # NotPSDError (float32)
    ]
