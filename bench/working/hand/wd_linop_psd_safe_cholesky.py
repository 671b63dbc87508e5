"""Hand rewrite of cases/wd_linop_psd_safe_cholesky.py: every jitter retry is computed unconditionally
(later retries add exactly 0 once all elements succeed), and a `torch.library.custom_op` with an
ORDERED effect replays the original's decisions on the `info` of each attempt: the same
`NumericalWarning`s, `NanError` and `NotPSDError` at run time."""
import warnings

import torch
from torch._library.effects import EffectType

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


def _replay_eager(A, infos, jitter, max_tries):
    # the original's decisions, taken on the `info` of every attempt
    info = infos[0]
    if not torch.any(info):
        return

    isnan = torch.isnan(A)
    if isnan.any():
        raise NanError(f"cholesky_cpu: {isnan.sum().item()} of {A.numel()} elements of the {A.shape} tensor are NaN.")

    for i in range(max_tries):
        jitter_new = jitter * (10**i)
        warnings.warn(
            f"A not p.d., added jitter of {jitter_new:.1e} to the diagonal",  # noqa: E231
            NumericalWarning,
        )
        if not torch.any(infos[i + 1]):
            return
    raise NotPSDError(
        f"Matrix not positive definite after repeatedly adding jitter up to {jitter_new:.1e}."  # noqa: E231
    )


_NS, _NAME = "wd_linop", "psd_safe_cholesky_replay"
if not hasattr(getattr(torch.ops, _NS), _NAME):

    @torch.library.custom_op(f"{_NS}::{_NAME}", mutates_args=())
    def _replay_op(A: torch.Tensor, infos: torch.Tensor, jitter: float, max_tries: int) -> None:
        _replay_eager(A, infos, jitter, max_tries)

    @_replay_op.register_fake
    def _(A, infos, jitter, max_tries):
        return None

    _replay_op.register_effect(EffectType.ORDERED)


def _psd_safe_cholesky(A, out=None, jitter=None, max_tries=None):
    if out is not None:
        out = (out, torch.empty(A.shape[:-2], dtype=torch.int32, device=out.device))

    L, info = torch.linalg.cholesky_ex(A, out=out)
    if settings.trace_mode.on():
        return L

    if jitter is None:
        jitter = settings.cholesky_jitter.value(A.dtype)
    if max_tries is None:
        max_tries = settings.cholesky_max_tries.value()
    # every retry runs: once all elements succeed, `info > 0` is all False, the later retries add
    # exactly 0 to the diagonal and return the same L
    infos = [info]
    Aprime = A.clone()
    jitter_prev = 0
    for i in range(max_tries):
        jitter_new = jitter * (10**i)
        # add jitter only where needed
        diag_add = ((info > 0) * (jitter_new - jitter_prev)).unsqueeze(-1).expand(*Aprime.shape[:-1])
        Aprime.diagonal(dim1=-1, dim2=-2).add_(diag_add)
        jitter_prev = jitter_new
        L, info = torch.linalg.cholesky_ex(Aprime, out=out)
        infos.append(info)
    # warnings, NanError and NotPSDError happen at run time, in the original's order
    getattr(getattr(torch.ops, _NS), _NAME)(A.detach(), torch.stack(infos), float(jitter), max_tries)
    return L


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
