"""Decorators that wrap a compiled function: the wrapper they return is what dynamo compiles.

`@capture_outputs def forward(...)` makes `forward` the `wrapper` closure that transformers'
decorator returns, and dynamo traces that wrapper with `forward` inlined into it. So the wrapper's
own breaks count, and a break anywhere in `forward` stops the wrapper's frame at its call of the
wrapped function: inside a `try` there (transformers' `capture_outputs` resets its output
collector in a `finally`), dynamo cannot resume and runs the whole wrapper eagerly, which makes
each comprehension in it a frame of its own (GM519; measured on torch 2.13 with transformers
5.23.0's `output_capturing.py:332` and 4.57.6's `generic.py:985`).

The wrapper is found by shape, not by name: a function, nested in the decorator (or in a
decorator factory's inner function), that the enclosing function returns and that calls a
parameter of an enclosing function (the wrapped callable).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..astwalk import child_nodes

# The key prefix of an extra entry naming a decorator whose wrapper is compiled (see entry_key).
DECORATOR_PREFIX = "@"
_BREAKS = "breaks"
_METHOD_OF_MODULE = "module-method"


@dataclass(frozen=True)
class Wrapper:
    """The function a decorator returns in place of the one it decorates."""

    function: ast.FunctionDef
    wrapped_param: str  # the enclosing function's parameter that holds the decorated function
    path: tuple[str, ...]  # names of the functions it is nested in, outermost first


@dataclass(frozen=True)
class Wrapping:
    """What the analysis of a compiled wrapper needs to know about the function it wraps."""

    wrapped_param: str
    wrapped_breaks: bool  # the decorated function (or what it calls) breaks
    module_method: bool  # the decorated function is a method of an nn.Module: the wrapper's first argument is the module
    qualified: str = ""  # the wrapper's dotted name in its file (`capture_outputs.wrapped_fn.wrapper`)


def returned_wrapper(decorator: ast.FunctionDef | ast.AsyncFunctionDef) -> Wrapper | None:
    """The wrapper `decorator` returns, or None when it returns something else (the function
    itself, as a registering decorator does)."""
    return _search(decorator, (), set())


def _search(function: ast.FunctionDef | ast.AsyncFunctionDef, path: tuple[str, ...], enclosing: set[str]) -> Wrapper | None:
    own = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    params = enclosing | own
    nested = {s.name: s for s in function.body if isinstance(s, ast.FunctionDef)}
    here = (*path, function.name)
    for name in _returned_names(function):
        inner = nested.get(name)
        if inner is None:
            continue
        called = _called_names(inner) & (params - _own_names(inner))
        if called:  # the innermost function's own parameter first (a factory's argument may be callable too)
            return Wrapper(inner, sorted(called, key=lambda name: (name not in own, name))[0], here)
        found = _search(inner, here, params - _own_names(inner))
        if found is not None:
            return found
    return None


def _returned_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Names of nested functions `function` returns: `return wrapper`, `return wrapped_fn(func)`."""
    names: list[str] = []
    for node in _own_nodes(function):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value.func if isinstance(node.value, ast.Call) else node.value
            if isinstance(value, ast.Name):
                names.append(value.id)
    return names


def _called_names(function: ast.FunctionDef) -> set[str]:
    return {n.func.id for n in _own_nodes(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _own_names(function: ast.FunctionDef) -> set[str]:
    """Names `function` binds itself (its parameters and assignments), which shadow the enclosing ones."""
    args = function.args
    bound = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    bound.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    bound.update(n.id for n in _own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return bound


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef):  # type: ignore[no-untyped-def]
    """The nodes of `function`'s body, not those of functions or classes nested in it."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    pending: list[ast.AST] = [s for s in function.body if not isinstance(s, nested)]
    while pending:
        node = pending.pop()
        yield node
        for child in child_nodes(node):
            if not isinstance(child, nested):
                pending.append(child)


def entry_key(decorator: str, wrapping: Wrapping) -> str:
    """How a caller names a decorator's compiled wrapper among a file's extra entries
    (`Config.extra_entries`, keyed by strings): `@capture_outputs#breaks,module-method`."""
    flags = [flag for flag, on in ((_BREAKS, wrapping.wrapped_breaks), (_METHOD_OF_MODULE, wrapping.module_method)) if on]
    return f"{DECORATOR_PREFIX}{decorator}#{','.join(flags)}"


def parse_entry_key(key: str) -> tuple[str, bool, bool] | None:
    """`entry_key`'s (decorator, wrapped_breaks, module_method), or None for a plain entry."""
    if not key.startswith(DECORATOR_PREFIX):
        return None
    decorator, _, flags = key[len(DECORATOR_PREFIX) :].partition("#")
    given = set(flags.split(","))
    return decorator, _BREAKS in given, _METHOD_OF_MODULE in given
