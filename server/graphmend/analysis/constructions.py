"""The kind of an attribute `__init__` copies from a parameter, read from how the file constructs
the class.

TorchRL's `Bounded.__init__(self, low, high)` stores `self.low = low`; nothing in the class says
what `low` is, but the one place the file builds a `Bounded` passes `torch.tensor([...])` for it,
so `self.low` is a tensor wherever a method reads it (`val >= self.low.to(val.device)` is a tensor
comparison). Every in-file construction must pass a tensor for the parameter (by position, by
keyword, or through a tensor default); one that passes anything else, or a value whose kind the
call site alone does not tell, leaves the attribute unknown. A class that has in-file subclasses
is left alone too: their instances reach the attribute through `super().__init__` calls, not
through constructions of the class itself.

The file is walked once, the first time such an attribute is read; most files never ask.
"""

from __future__ import annotations

import ast

from ..astwalk import walk
from .kinds import TENSOR_KINDS, Kind
from .symbols import ClassInfo, ModuleIndex


def constructed_attr_kind(index: ModuleIndex, info: ClassInfo, attr: str) -> Kind | None:
    """The kind every in-file construction of `info`'s class gives `self.<attr>`, or None."""
    param = info.attr_params.get(attr)
    if not param:
        return None
    key = (info.name, attr)
    if key not in index.constructed_kinds:
        index.constructed_kinds[key] = None  # a construction inside the class asks again while this runs
        index.constructed_kinds[key] = _kind_passed(index, info, param)
    return index.constructed_kinds[key]


def constructed_attr_holdings(index: ModuleIndex, info: ClassInfo, attr: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The in-file classes and module-level functions every in-file construction of `info`'s
    class passes for the parameter `__init__` stores in `self.<attr>`: torchtune's
    `TransformerCrossAttentionLayer(attn, ...)` after `attn = MultiHeadAttention(...)`, the DEQ
    tutorial's `DEQFixedPoint(f, forward_iteration)`. Calling `self.<attr>(...)` then runs that
    class's `forward` or that function. Empty where a construction passes anything else, or none
    is in the file, or the class has in-file subclasses (as for kinds, above)."""
    param = info.attr_params.get(attr)
    key = (info.name, attr)
    if not param:
        return (), ()
    if key not in index.constructed_holdings:
        index.constructed_holdings[key] = (), ()  # a construction inside the class asks again while this runs
        index.constructed_holdings[key] = _holdings_passed(index, info, param)
    return index.constructed_holdings[key]


def _holdings_passed(index: ModuleIndex, info: ClassInfo, param: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    init = info.methods.get("__init__")
    calls = _constructions(index).get(info.name, [])
    if init is None or not calls or any(info.name in other.local_bases for other in index.classes.values()):
        return (), ()
    scopes = _construction_scopes(index)
    classes: list[str] = []
    functions: list[str] = []
    for call in calls:
        passed = _argument_for(init, call, param)
        bindings = scopes.get(id(call), {})
        if isinstance(passed, ast.Name) and bindings.get(passed.id) is not None:
            passed = bindings[passed.id]  # `attn = MultiHeadAttention(...)` earlier in the same function
        elif isinstance(passed, ast.Name) and passed.id in bindings:
            return (), ()  # bound there some other way, or more than once
        if isinstance(passed, ast.Call) and isinstance(passed.func, ast.Name) and passed.func.id in index.classes:
            classes.append(passed.func.id)
        elif isinstance(passed, ast.Name) and passed.id in index.functions:
            functions.append(passed.id)
        elif isinstance(passed, ast.Name) and passed.id in index.global_instances:
            classes.append(index.global_instances[passed.id])
        else:
            return (), ()
    return tuple(dict.fromkeys(classes)), tuple(dict.fromkeys(functions))


def _construction_scopes(index: ModuleIndex) -> dict[int, dict[str, ast.expr | None]]:
    """For each construction of an in-file class inside a function: the names that function (the
    innermost one) binds, each to its one assigned value, or None where it binds it otherwise or
    more than once (parameters, loop targets, a second assignment)."""
    if index.construction_scopes is None:
        scopes: dict[int, dict[str, ast.expr | None]] = {}
        for function in walk(index.tree) if index.tree is not None else ():
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            bindings: dict[str, ast.expr | None] = {a.arg: None for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
            constructions = []
            plain_targets: set[int] = set()  # walk meets an assignment before its target
            for node in walk(function):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    name = node.targets[0].id
                    bindings[name] = node.value if name not in bindings else None
                    plain_targets.add(id(node.targets[0]))
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in plain_targets:
                    bindings[node.id] = None
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in index.classes:
                    constructions.append(node)
            for call in constructions:
                scopes[id(call)] = bindings  # inner functions come later in the walk: the innermost wins
        index.construction_scopes = scopes
    return index.construction_scopes


def _kind_passed(index: ModuleIndex, info: ClassInfo, param: str) -> Kind | None:
    init = info.methods.get("__init__")
    if init is None or any(info.name in other.local_bases for other in index.classes.values()):
        return None
    calls = _constructions(index).get(info.name, [])
    if not calls:
        return None
    from .tensors import Evaluator  # tensors reads this module's answers

    evaluator = Evaluator(index)
    kinds = set()
    for call in calls:
        passed = _argument_for(init, call, param)
        if passed is None:
            return None
        kind = evaluator.visit(passed)
        if kind not in TENSOR_KINDS:
            return None
        kinds.add(kind)
    return kinds.pop() if len(kinds) == 1 else Kind.TENSOR


def _argument_for(init: ast.FunctionDef, call: ast.Call, param: str) -> ast.expr | None:
    """The expression `call` passes for `param` of `init` (its default where it passes none)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    if param in positional:
        position = positional.index(param)
        if position < len(call.args):
            return call.args[position]
        defaults = init.args.defaults
        offset = position - (len(positional) - len(defaults))
        return defaults[offset] if offset >= 0 else None
    for arg, default in zip(init.args.kwonlyargs, init.args.kw_defaults):
        if arg.arg == param:
            return default
    return None


def _constructions(index: ModuleIndex) -> dict[str, list[ast.Call]]:
    if index.constructions is None:
        found: dict[str, list[ast.Call]] = {}
        if index.tree is not None:
            for node in walk(index.tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in index.classes:
                    found.setdefault(node.func.id, []).append(node)
        index.constructions = found
    return index.constructions
