"""The Python type of a non-tensor value, when it is certain: what a custom op's schema needs.

A custom op declares the type of every argument (`int`, `float`, `bool`, `str`, `torch.dtype`,
`torch.device`, optionally None) and rejects anything else at run time, so a wrong guess would
turn working code into an error. The inference therefore only answers from facts: literals,
annotations, sizes of tensors (`x.shape[0]`, `x.size(1)`, `len(...)`), formatting (always `str`),
comparisons of non-tensors (`bool`), and local names whose every binding in the function has one
of those types. Anything else is unknown (None) and the fixer declines or formats the value first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..analysis.kinds import TENSOR_KINDS
from ..astwalk import child_nodes, walk
from .context import FixContext

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class PyType:
    name: str  # "int", "float", "bool", "str", "dtype", "device", "Tensor"
    optional: bool = False

    def annotation(self, torch: str) -> str:
        if self.name == "value":
            return f"{torch}.Tensor | int | float | bool | str | None"
        base = f"{torch}.{self.name}" if self.name in ("dtype", "device", "Tensor") else self.name
        return f"{base} | None" if self.optional else base


INT, FLOAT, BOOL, STR = PyType("int"), PyType("float"), PyType("bool"), PyType("str")
# A value the moved code only formats (print, %s, a plain f-string field): passed as a tensor, a
# number, a bool or its text, whichever it holds when traced (ordered_helper.py).
TEXT = PyType("object")
# A value of unknown type the moved code computes with (`%d`, arithmetic, an exception's argument):
# passed as the tensor, number, bool or str it holds when traced; any other type keeps the original
# call (ordered_helper.py).
VALUE = PyType("value")
_ANNOTATIONS = {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR}
_TORCH_ANNOTATIONS = {"torch.dtype": PyType("dtype"), "torch.device": PyType("device")}
_SIZE_METHODS = frozenset({"dim", "ndimension", "numel", "nelement", "element_size", "get_device"})
_SIZE_ATTRIBUTES = frozenset({"ndim", "itemsize", "nbytes"})
_BOOL_ATTRIBUTES = frozenset({"requires_grad", "is_cuda", "is_cpu", "is_leaf", "is_meta", "is_sparse", "is_quantized"})
_BOOL_METHODS = frozenset({"is_floating_point", "is_complex", "is_contiguous", "is_signed"})
_STR_METHODS = frozenset({"format", "join", "strip", "lower", "upper", "replace"})
_STR_BUILTINS = frozenset({"builtins.str", "builtins.repr", "builtins.format", "builtins.ascii"})
_BOOL_BUILTINS = frozenset({"builtins.isinstance", "builtins.issubclass", "builtins.hasattr", "builtins.callable", "builtins.bool"})
_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def value_type(ctx: FixContext, expr: ast.expr, function: Function, _seen: frozenset[str] = frozenset()) -> PyType | None:
    """The certain Python type of `expr` inside `function`, or None."""
    if ctx.kind(expr) in TENSOR_KINDS:
        return None
    if isinstance(expr, ast.Constant):
        value = expr.value
        if isinstance(value, bool):
            return BOOL
        return {int: INT, float: FLOAT, str: STR}.get(type(value))
    if isinstance(expr, ast.JoinedStr):
        return STR
    if isinstance(expr, ast.Name):
        return name_type(ctx, function, expr.id, _seen)
    if isinstance(expr, ast.Attribute):
        return _attribute_type(ctx, expr, function)
    if isinstance(expr, ast.Subscript):
        # x.shape[i] / x.size()[i] on a tensor: an int (a slice is a Size: not handled)
        return INT if not isinstance(expr.slice, ast.Slice) and _is_shape(ctx, expr.value) else None
    if isinstance(expr, ast.Call):
        return _call_type(ctx, expr, function, _seen)
    if isinstance(expr, (ast.Compare, ast.BoolOp)) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return _truth_type(ctx, expr, function, _seen)
    if isinstance(expr, ast.BinOp):
        return _binop_type(ctx, expr, function, _seen)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = value_type(ctx, expr.operand, function, _seen)
        return inner if inner in (INT, FLOAT) else None
    return None


def name_type(ctx: FixContext, function: Function, name: str, _seen: frozenset[str] = frozenset()) -> PyType | None:
    """The type of a local name when every binding of it in the function gives the same one.
    Asked once per function and name (a sum of 2,000 `x` terms asks 2,000 times)."""
    if _seen:  # inside a chain of definitions: the answer depends on the chain
        return _name_type(ctx, function, name, _seen)
    return ctx.remember(("name_type", id(function), name), lambda: _name_type(ctx, function, name, _seen))


def _name_type(ctx: FixContext, function: Function, name: str, _seen: frozenset[str]) -> PyType | None:
    if name in _seen:
        return None
    seen = _seen | {name}
    found: set[PyType | None] = set()
    args = function.args
    if any(a is not None and a.arg == name for a in (args.vararg, args.kwarg)):
        return None
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if arg.arg == name:
            found.add(annotation_type(ctx, arg.annotation))
    for node in own_nodes(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                found |= _target_types(ctx, target, node.value, name, function, seen)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name:
                found.add(annotation_type(ctx, node.annotation))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name:
                found.add(_aug_type(ctx, node, function, seen))
        elif not isinstance(node, (ast.expr, ast.expr_context)) and name in stored_names(node):
            return None  # bound by a for, with, import, def, except...: not inferred
        elif isinstance(node, ast.NamedExpr) and name in stored_names(node):
            return None
    return found.pop() if len(found) == 1 else None


def annotation_type(ctx: FixContext, annotation: ast.expr | None) -> PyType | None:
    """`int`, `Optional[str]`, `bool | None`, `torch.dtype`... -> the type; anything else None."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Name) and annotation.id in _ANNOTATIONS and annotation.id not in ctx.index.top_level_names:
        return _ANNOTATIONS[annotation.id]
    qualified = ctx.qualname(annotation)
    if qualified in _TORCH_ANNOTATIONS:
        return _TORCH_ANNOTATIONS[qualified]
    inner: ast.expr | None = None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        others = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(others) == 1:
            inner = others[0]
    elif isinstance(annotation, ast.Subscript) and ctx.qualname(annotation.value) == "typing.Optional":
        inner = annotation.slice
    if inner is not None:
        base = annotation_type(ctx, inner)
        return PyType(base.name, True) if base is not None else None
    return None


# `torch.finfo(dtype).eps` and kin: Python numbers describing a dtype (the usual epsilon of a loss
# or an accuracy), known without running anything.
_NUMBER_LIMITS: dict[str, dict[str, PyType]] = {
    "torch.finfo": {name: FLOAT for name in ("eps", "max", "min", "tiny", "smallest_normal", "resolution")} | {"bits": INT},
    "torch.iinfo": {"max": INT, "min": INT, "bits": INT},
}


def _attribute_type(ctx: FixContext, expr: ast.Attribute, function: Function) -> PyType | None:
    if ctx.kind(expr.value) in TENSOR_KINDS:
        if expr.attr in _SIZE_ATTRIBUTES:
            return INT
        if expr.attr in _BOOL_ATTRIBUTES:
            return BOOL
        return PyType(expr.attr) if expr.attr in ("dtype", "device") else None
    if expr.attr in ("__name__", "__qualname__"):
        return STR
    if isinstance(expr.value, ast.Call):
        limits = _NUMBER_LIMITS.get(ctx.qualname(expr.value.func) or "", {})
        if expr.attr in limits:
            return limits[expr.attr]
    if isinstance(expr.value, ast.Name) and expr.value.id == self_name(function):
        return BOOL if expr.attr == "training" else self_attribute_type(ctx, function, expr.attr)
    return None


def self_attribute_type(ctx: FixContext, function: Function, attr: str) -> PyType | None:
    """`self.<attr>` when `__init__` only ever sets it to values of one known type
    (`self.steps = steps` with `steps: int`, `self.eps = 1e-5`) and no other method assigns it."""
    owner = ctx.index.owner.get(id(function))
    init = owner.methods.get("__init__") if owner is not None else None
    if owner is None or init is None:
        return None
    values: list[ast.expr] = []
    for method in owner.methods.values():
        for node in walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            if any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) and t.value.id == self_name(method) for t in targets):
                if method is not init or not isinstance(node, ast.Assign):
                    return None  # changed elsewhere: its type may change too
                values.append(node.value)
    types = {value_type(ctx, v, init) for v in values}
    return types.pop() if len(types) == 1 and None not in types else None


def _call_type(ctx: FixContext, call: ast.Call, function: Function, seen: frozenset[str]) -> PyType | None:
    func = call.func
    name = ctx.qualname(func)
    if name in _STR_BUILTINS:
        return STR
    if name in _BOOL_BUILTINS:
        return BOOL
    if name in ("builtins.len", "builtins.int") or (name == "builtins.round" and len(call.args) == 1):
        return INT
    if name == "builtins.float":
        return FLOAT
    if not isinstance(func, ast.Attribute):
        return None
    if ctx.kind(func.value) in TENSOR_KINDS:
        if func.attr in _SIZE_METHODS or (func.attr == "size" and call.args):
            return INT
        return BOOL if func.attr in _BOOL_METHODS else None
    if func.attr in _STR_METHODS and value_type(ctx, func.value, function, seen) == STR:
        return STR
    return None


def _truth_type(ctx: FixContext, expr: ast.expr, function: Function, seen: frozenset[str]) -> PyType | None:
    """Comparisons and `not` of non-tensors are bools; `a and b` is one of its operands."""
    if any(ctx.kind(n) in TENSOR_KINDS for n in walk(expr) if isinstance(n, ast.expr)):
        return None
    if isinstance(expr, ast.BoolOp):
        types = {value_type(ctx, value, function, seen) for value in expr.values}
        return BOOL if types == {BOOL} else None
    return BOOL


def _binop_type(ctx: FixContext, expr: ast.BinOp, function: Function, seen: frozenset[str]) -> PyType | None:
    if isinstance(expr.op, ast.Mod) and isinstance(expr.left, ast.Constant) and isinstance(expr.left.value, str):
        return STR
    left, right = value_type(ctx, expr.left, function, seen), value_type(ctx, expr.right, function, seen)
    if left == STR and right == STR and isinstance(expr.op, ast.Add):
        return STR
    if left not in (INT, FLOAT) or right not in (INT, FLOAT):
        return None
    if isinstance(expr.op, ast.Div) or FLOAT in (left, right):
        return FLOAT if isinstance(expr.op, (*_INT_OPS, ast.Div)) else None
    return INT if isinstance(expr.op, _INT_OPS) else None


def _target_types(ctx: FixContext, target: ast.expr, value: ast.expr, name: str, function: Function, seen: frozenset[str]) -> set[PyType | None]:
    if isinstance(target, ast.Name):
        return {value_type(ctx, value, function, seen)} if target.id == name else set()
    if not isinstance(target, (ast.Tuple, ast.List)) or name not in stored_names(target):
        return set()  # binds other names (or an attribute / item)
    if any(isinstance(e, ast.Starred) for e in target.elts):
        return {None}
    if _is_shape(ctx, value) or (isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice) and _is_shape(ctx, value.value)):
        return {INT}  # `b, n = x.shape`, `x.size()`, `x.size()[:-1]`
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
        found: set[PyType | None] = set()
        for element, item in zip(target.elts, value.elts):
            found |= _target_types(ctx, element, item, name, function, seen)
        return found
    return {None}


def _aug_type(ctx: FixContext, node: ast.AugAssign, function: Function, seen: frozenset[str]) -> PyType | None:
    """`n += 1` keeps an int an int only if every other binding is an int too (checked by the caller)."""
    right = value_type(ctx, node.value, function, seen)
    if isinstance(node.op, ast.Add) and right == STR:
        return STR
    if right == INT and isinstance(node.op, _INT_OPS):
        return INT
    return None


def _is_shape(ctx: FixContext, expr: ast.expr) -> bool:
    if isinstance(expr, ast.Attribute) and expr.attr == "shape":
        return ctx.kind(expr.value) in TENSOR_KINDS
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "size" and not expr.args:
        return ctx.kind(expr.func.value) in TENSOR_KINDS
    return False


def own_nodes(function: Function) -> Iterator[ast.AST]:
    """The nodes of a function's body, without descending into nested functions, classes, lambdas."""
    return nodes_in_scope(function.body)


def nodes_in_scope(roots: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """`roots` and the nodes under them, without descending into functions, classes and lambdas
    defined there (their own nodes run in another scope, or never)."""
    stack: list[ast.AST] = list(roots)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(child_nodes(node))


def stored_names(node: ast.AST) -> set[str]:
    """Names a statement or target binds (for definitions and imports: their names)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    if isinstance(node, ast.stmt) and hasattr(node, "body"):
        # a compound statement binds its own targets (for/with), not what its body binds
        heads = [getattr(node, "target", None), *[i.optional_vars for i in getattr(node, "items", [])]]
        return {n.id for h in heads if h is not None for n in walk(h) if isinstance(n, ast.Name)}
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def self_name(function: Function) -> str | None:
    params = function.args.posonlyargs + function.args.args
    return params[0].arg if params else None
