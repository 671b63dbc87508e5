"""`logging.warning` as the first statement: a break before any traced op, seen in the log (GM305)."""
import logging

import torch


@torch.compile
def f(x):
    logging.warning("entering the compiled step")  # expect: GM305
    y = x * 2
    return y + 1
