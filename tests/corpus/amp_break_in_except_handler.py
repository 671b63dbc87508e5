"""A break in an `except` handler that actually runs (raise inside try) skips the whole function (GM306, frame-skip)."""
import logging

import torch

logger = logging.getLogger(__name__)


@torch.compile
def f(x):
    y = x * 2
    try:
        raise ValueError("unsupported layout")
    except ValueError:
        logger.warning("falling back to the slow path")  # expect: GM306
        y = y + 1
    return y * 3
