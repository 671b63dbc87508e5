"""GM532: `super().name` reaching a property -> `Base.name.__get__(self)`.

Dynamo hands back the property object for `super().name` (analysis/super_properties.py). Reading
the property from the class `super()` would search and calling its `__get__` with the instance is
the same lookup spelled without `super()`: the same getter runs on the same object (`Base.name`
returns the property itself, as `property.__get__(None, Base)` does). Dynamo traces it (measured on
torch 2.13; DreamerV3's `OneHotDist` over torch.distributions is then one graph). `self.name`
would trace too, but it is another lookup wherever a subclass overrides `name`.

`super()` searches the MRO of `type(self)` after the class. With one base `B`, that is `B`'s own
MRO, unless a subclass with several bases puts another class between them: the fix needs the class
to have exactly one base, written as a (dotted) name the method does not rebind, and no class of
the file to derive from it with more than one base. torch's `lazy_property` is left alone: read
through `super()` it caches the value on the instance, which `Base.name` (a plain property
wrapping the getter) would not.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.super_properties import property_kind, super_call
from ...astwalk import walk
from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..ordered_site import local_names


class SuperPropertyFixer:
    codes = frozenset({"GM532"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.Attribute, ast.Name))
        function = ctx.function_of(node) if node is not None else None
        if node is None or function is None:
            raise DeclineError("no-node", "could not find the read in the source")
        read = node if isinstance(node, ast.Attribute) else _bound_read(function, node) if isinstance(node, ast.Name) else None
        cls = ctx.index.owner.get(id(function))
        params = function.args.posonlyargs + function.args.args
        if read is None or cls is None or not params or not super_call(read.value, cls, params[0].arg):
            raise DeclineError("no-node", "could not find the `super()` read in a method of the class")
        if property_kind(ctx.index, cls, read.attr) != "property":
            raise DeclineError(
                "lazy-property",
                f"`{read.attr}` is torch's lazy_property: read through `super()` it caches the value on the instance, and read through the base it would not",
            )
        if len(cls.node.bases) != 1 or not _dotted(cls.node.bases[0]):
            raise DeclineError("bases", f"`{cls.name}` does not have exactly one base written as a name: `super()` may search past it")
        base = cls.node.bases[0]
        root = _root(base)
        if root in local_names(ctx, function):
            raise DeclineError("base-rebound", f"`{root}` names something else inside `{function.name}`")
        diamond = next((other.name for other in ctx.index.classes.values() if len(other.node.bases) > 1 and _derives(ctx, other, cls)), None)
        if diamond is not None:
            raise DeclineError("diamond", f"`{diamond}` derives from `{cls.name}` with several bases: `super()` may reach another class first")
        replacement = cst.parse_expression(f"{ctx.code(base)}.{read.attr}.__get__({params[0].arg})")
        target = ctx.cst_node(function, read, cst.Attribute)
        title = f"Read the property `{read.attr}` through `{ctx.code(base)}` instead of `super()` (the same getter on the same object, which dynamo traces)"
        return Fix(finding, title, Safety.SAFE, (ctx.rewrite(function, {target: replacement}),))


def _bound_read(function: ast.FunctionDef | ast.AsyncFunctionDef, use: ast.Name) -> ast.Attribute | None:
    """The `super().<attr>` last bound to the used name before the use."""
    found = None
    for stmt in walk(function):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == use.id
            and stmt.lineno <= use.lineno
            and isinstance(stmt.value, ast.Attribute)
            and (found is None or stmt.lineno > found.lineno)
        ):
            found = stmt.value
    return found


def _dotted(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and _dotted(node.value))


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _derives(ctx: FixContext, cls, base) -> bool:  # type: ignore[no-untyped-def]
    return any(info is base for info in ctx.index.in_file_ancestry(cls)[1:])
