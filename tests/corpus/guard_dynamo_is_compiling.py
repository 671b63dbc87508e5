"""torch._dynamo.is_compiling() guards eager-only logging: no break."""
import logging

import torch

logger = logging.getLogger(__name__)


@torch.compile
def f(x):
    y = x.relu()
    if not torch._dynamo.is_compiling():
        logger.warning("running eagerly, max=%s", y.max().item())
    return y
