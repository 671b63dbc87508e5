"""Probing an optional package inside compiled code (GM530, frame-skip).

Dynamo runs the import while tracing. Where the package is not installed, it logs "Import failure"
and runs the whole function eagerly, even with the `except ImportError` that makes the program
work eagerly; the same probe of an installed package (`json`, `colorsys`) traces. The probe may sit
in a cached helper that the compiled function calls (TabPFN's flash-attention-3 probe)."""

import functools

import torch


@functools.cache
def _load_fast_kernel():
    try:
        from graphmend_absent_kernels import fast_attention  # expect: GM530
    except ImportError:
        return None
    return fast_attention


@functools.cache
def _load_json_dumps():
    try:
        from json import dumps
    except ImportError:
        return None
    return dumps


@torch.compile
def uses_helper(x):
    y = x * 2
    if _load_fast_kernel() is None:
        return y + 1
    return y - 1


@torch.compile
def installed_helper(x):
    y = x * 2
    if _load_json_dumps() is None:
        return y + 1
    return y - 1


@torch.compile
def inline_probe(x):
    y = x * 2
    try:
        import colorsys, graphmend_absent_kernels.sub as kernels  # expect: GM530
    except Exception:
        kernels = None
    return y + 1


@torch.compile
def installed_probe(x):
    y = x * 2
    try:
        import colorsys
        from math import sqrt
    except ImportError:
        sqrt = None
    return y + 1


def sample():
    x = torch.randn(4)
    return [(fn, (x,), {}) for fn in (uses_helper, installed_helper, inline_probe, installed_probe)]
