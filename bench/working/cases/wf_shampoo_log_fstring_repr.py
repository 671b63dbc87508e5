"""A log call with a self-documenting f-string of a tensor (`logger.info(f"a : {a=}")`) in the
middle of a Shampoo-style preconditioner factor update.

Source: https://github.com/pytorch/pytorch/issues/120375 ("Dynamo doesn't generate resume calls
after graph breaking on log calls", found while debugging Distributed Shampoo; the maintainer's
comment: "This is because Dynamo doesn't handle `f"a : {a=}"` well. And this happens on FORMAT
bytecode which is not graph break supported"). The issue's repro is a gist; the log line is as
quoted there, the surrounding factor-matrix update (beta2 running average of G G^T, trace
normalisation) is a reduced Shampoo step.

Breaks: `logger.info(f"a : {a=}")`: formatting a tensor's repr needs its run-time value; dynamo
cannot resume after the FORMAT bytecode, so the whole function falls back to eager.

HAND: the log call moves into a `torch.library.custom_op` with an ORDERED effect, called on `a`,
which logs the same f-string (same logger, level and text) at run time.
"""
import logging

import torch

KIND = "log-fstring"

logger = logging.getLogger(__name__)


def update_factor_matrix(factor_matrix, grad, beta2=0.99, epsilon=1e-6):
    outer_product = grad @ grad.T
    factor_matrix = beta2 * factor_matrix + (1 - beta2) * outer_product
    a = torch.trace(factor_matrix)
    logger.info(f"a : {a=}")
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
