"""Differential checks shared by the fixture tests and the property tests: run the original and
the rewritten code eagerly and compare, and count graphs and breaks with real dynamo."""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from pathlib import Path
from typing import Any

import torch
from graphmend.runtime.worker import capture

from .ground_truth import import_case


def callable_of(module: Any) -> Any:
    fn = module.make() if hasattr(module, "make") else module.f
    if hasattr(fn, "_orig_mod"):
        return fn._orig_mod  # the module (whose `__call__` compiling it runs), not its `forward`
    return getattr(fn, "_torchdynamo_orig_callable", fn)


def same(a: Any, b: Any, path: str = "output") -> list[str]:
    if isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return [f"{path}: {type(a).__name__} of {len(a)} vs {b!r}"]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in same(x, y, f"{path}[{i}]")]
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        return [p for key in a for p in same(a[key], b[key], f"{path}[{key!r}]")]
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
        if a.dtype != b.dtype or a.shape != b.shape:
            return [f"{path}: {a.dtype}{tuple(a.shape)} vs {b.dtype}{tuple(b.shape)}"]
        if not torch.allclose(a.double(), b.double(), atol=1e-6, rtol=1e-5, equal_nan=True):
            return [f"{path}: values differ, max abs diff {(a.double() - b.double()).abs().nan_to_num(0).max().item():.3g}"]
        return []
    if type(a) in (bool, int, float) and type(b) in (bool, int, float) and type(a) is not type(b):
        return [f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"]  # 1 == 1.0 == True
    if type(a) is float and type(b) is float:  # a number read off a tensor: the tensors' tolerance
        close = math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) or (math.isnan(a) and math.isnan(b))
        return [] if close else [f"{path}: {a!r} vs {b!r}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def run_quietly(fn: Any, args: tuple) -> Any:
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def gradients(fn: Any, args: tuple) -> list[Any]:
    """The gradient of the outputs' sum w.r.t. each floating input. An input the output does not
    depend on gets zeros: a branch that returns a constant has no gradient, and its `where` form
    a zero one, which is the same for any further use."""
    leaves = tuple(a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
    output = run_quietly(fn, leaves)
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    total = sum(o.sum() for o in outputs if isinstance(o, torch.Tensor) and o.is_floating_point())
    if isinstance(total, torch.Tensor) and total.requires_grad:
        total.backward()
    tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]
    return [leaf.grad if leaf.grad is not None else torch.zeros_like(leaf) for leaf in tensors]


def breaks(path: Path) -> tuple[int, int]:
    import torch._dynamo.config as dynamo_config

    snapshot = dynamo_config.get_config_copy()
    try:
        module = import_case(path)
        fn = callable_of(module)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            result = capture(fn, module.inputs()[0])
        assert result["error"] is None, result["error"]
        return result["graphs"], len([b for b in result["breaks"] if not b["duplicate"]])
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dynamo_config.load_config(snapshot)
