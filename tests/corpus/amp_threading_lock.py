"""`with _lock:` on a module-level threading.Lock is unsupported; dynamo skips the whole function (GM514)."""
import threading

import torch

_lock = threading.Lock()
_cache = {}


@torch.compile
def f(x):
    y = x * 2
    with _lock:  # expect: GM514
        _cache["last"] = y
    return y + 1
