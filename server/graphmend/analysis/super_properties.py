"""Which `super().<name>` reads reach a property (GM532).

Measured on torch 2.13: dynamo's `super()` object hands back the `property` itself instead of
calling it, so the traced code then fails inside dynamo ("Observed exception": `'property' * int`,
or "call_function args: ... GetAttrVariable(SuperVariable(), name)"), and dynamo falls back to
eager for the whole function it was compiling, the caller that reached the method included. The
same holds for torch.distributions' `lazy_property` (`logits`, `probs`), which RL code reads through
`super()` in its distribution subclasses (DreamerV3's `OneHotDist.mode`). Methods called through
`super()`, plain class attributes, `self.<name>` and `Base.<name>.__get__(self)` all trace.
`functools.cached_property` is left out: dynamo breaks inside it however it is read.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from ..astwalk import child_nodes, walk
from .symbols import ClassInfo, ModuleIndex
from .torch_api import CLASS_PROPERTIES

# The accessor decorators of a property (`@scale.setter` redefines `scale` as a property).
PROPERTY_ACCESSORS = frozenset({"setter", "getter", "deleter"})


def calls_super(node: ast.AST) -> TypeGuard[ast.Call]:
    """`super(...)`, in any form: the cheap first test of every check here."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def super_call(node: ast.expr, cls: ClassInfo, self_name: str | None) -> bool:
    """`super()`, or `super(<cls>, <self>)` naming the class being defined and the method's first
    parameter: the two forms that start the lookup after `cls`."""
    if not calls_super(node) or node.keywords:
        return False
    if not node.args:
        return True
    return (
        len(node.args) == 2
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == cls.name
        and isinstance(node.args[1], ast.Name)
        and node.args[1].id == self_name
    )


def instance_method(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Not a static or class method: `super()` there is bound to an instance (in a class method it
    is bound to the class, and reads the property object itself, in eager too)."""
    names = {d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else "" for d in function.decorator_list}
    return not names & {"staticmethod", "classmethod"}


def parent_of(function: ast.AST, node: ast.AST) -> ast.AST | None:
    """The node directly holding `node` in `function` (walked only for a read that fires)."""
    for candidate in walk(function):
        if any(child is node for child in child_nodes(candidate)):
            return candidate
    return None


def first_use(function: ast.AST, name: str, binding: ast.stmt) -> ast.Name | None:
    """The first read of `name` after the statement `binding` binds it (by position in the
    source), or None when nothing reads it: where dynamo meets the property object."""
    after = (binding.end_lineno or binding.lineno, binding.end_col_offset or 0)
    reads = [
        node for node in walk(function)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and (node.lineno, node.col_offset) > after
    ]
    return min(reads, key=lambda node: (node.lineno, node.col_offset), default=None)


def property_kind(index: ModuleIndex, cls: ClassInfo, name: str) -> str | None:
    """What `super().<name>` in a method of `cls` finds: "property" (a plain property, or an
    abstract one), "lazy_property" (torch.distributions' cached one), or None (something else, or
    nothing known). The bases are searched in order, depth first (the MRO of a class without
    diamonds); the first that defines `name` decides. A base of another package is known only from
    torch's own table."""
    return _search_bases(index, cls, name, set()) or None


def _search_bases(index: ModuleIndex, cls: ClassInfo, name: str, seen: set[str]) -> str | None:
    seen.add(cls.name)
    for base, qualname in zip(cls.node.bases, cls.base_names):
        local = index.classes.get(base.id) if isinstance(base, ast.Name) and base.id in cls.local_bases else None
        found: str | None
        if local is not None:
            if local.name in seen:
                continue
            found = defined_as(local.node, name)
            if found is None:
                found = _search_bases(index, local, name, seen)
        elif qualname is not None and qualname in CLASS_PROPERTIES:
            found = CLASS_PROPERTIES[qualname].get(name)
        else:
            found = None
        if found is not None:
            return found
    return None


def is_property_getter(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A getter: `@property`, `@abc.abstractproperty` or a property's `@x.getter` (reading the
    attribute runs it; a setter or deleter does not, and torch's `lazy_property` caches)."""
    return any(
        _descriptor(d) == "property" and not (isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter"))
        for d in function.decorator_list
    )


def property_names(index: ModuleIndex) -> frozenset[str]:
    """The names of the property getters of the file's classes, computed once: a read of any other
    attribute runs no getter of the file (Evaluator._property_read asks on every attribute read)."""
    if index.property_names is None:
        index.property_names = frozenset(
            name for info in index.classes.values() for name, method in info.methods.items() if is_property_getter(method)
        )
    return index.property_names


def defined_as(node: ast.ClassDef, name: str) -> str | None:
    """How the class body defines `name`: "property", "lazy_property", "" (as anything else), or
    None where it does not define it."""
    found: str | None = None
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            found = next((kind for d in stmt.decorator_list if (kind := _descriptor(d))), "")
        elif name in _assigned_names(stmt):
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            found = _descriptor(value.func) if isinstance(value, ast.Call) else ""
    return found


def _assigned_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.Assign):
        return {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


def _descriptor(decorator: ast.expr) -> str:
    """"property" for `@property`, `@abc.abstractproperty` and a property's `@x.setter`,
    "lazy_property" for torch's, "" for anything else."""
    last = decorator.id if isinstance(decorator, ast.Name) else decorator.attr if isinstance(decorator, ast.Attribute) else ""
    if last == "lazy_property":
        return "lazy_property"
    if last in ("property", "abstractproperty") or (isinstance(decorator, ast.Attribute) and last in PROPERTY_ACCESSORS):
        return "property"
    return ""
