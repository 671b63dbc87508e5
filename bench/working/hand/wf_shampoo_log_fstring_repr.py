"""Hand rewrite of cases/wf_shampoo_log_fstring_repr.py: the f-string log call runs inside a
`torch.library.custom_op` with an ORDERED effect (same logger, level and text, at run time)."""
import logging

import torch
from torch._library.effects import EffectType

KIND = "log-fstring"

logger = logging.getLogger(__name__)

_NS = "wf_shampoo_log"
if not hasattr(getattr(torch.ops, _NS), "log_a"):

    @torch.library.custom_op(f"{_NS}::log_a", mutates_args=())
    def _log_a(a: torch.Tensor) -> None:
        logger.info(f"a : {a=}")

    @_log_a.register_fake
    def _(a):
        return None

    _log_a.register_effect(EffectType.ORDERED)


def update_factor_matrix(factor_matrix, grad, beta2=0.99, epsilon=1e-6):
    outer_product = grad @ grad.T
    factor_matrix = beta2 * factor_matrix + (1 - beta2) * outer_product
    a = torch.trace(factor_matrix)
    getattr(torch.ops, _NS).log_a(a)
    eye = torch.eye(factor_matrix.shape[0], dtype=factor_matrix.dtype)
    return factor_matrix / a + epsilon * eye


def make():
    return update_factor_matrix


def inputs():
    g = torch.Generator().manual_seed(11)

    def spd(n):
        m = torch.randn(n, n, generator=g)
        return m @ m.T / n + torch.eye(n)

    return [
        (spd(3), torch.randn(3, 2, generator=g)),
        (torch.eye(2), torch.randn(2, 4, generator=g)),
        (spd(4), torch.randn(4, 4, generator=g) * 3),
        (spd(2), torch.zeros(2, 3)),
        (spd(5), torch.randn(5, 1, generator=g), 0.9),
        (spd(3), torch.randn(3, 3, generator=g), 0.5, 1e-3),
        (spd(3).double(), torch.randn(3, 2, generator=g).double()),
        (spd(1), torch.randn(1, 6, generator=g)),
    ]
