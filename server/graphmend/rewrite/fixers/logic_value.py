"""GM104: `a and b` / `a or b` of 0-d boolean tensors kept as a value -> `torch.logical_and(a, b)`.

TorchRL's bounds check returns `(val >= low).all() and (val <= high).all()`: Python asks for the
truth value of the first tensor to pick the result, a graph break. Where every operand is a 0-d
bool tensor, the result of `a and b` is `a` when `a` is False and `b` otherwise: the same value,
dtype and shape as `torch.logical_and(a, b)` (and `a or b` as `torch.logical_or(a, b)`), with no
truth value taken. Only where the value is kept (assigned or returned); an `and` tested by an `if`
or `assert` is those fixers' to rewrite.

The rewrite evaluates `b` where the original did not (when `a` is False): it must be pure
(purity.py), and elementwise work in it must not raise on shapes. That is settled while tracing:
the leaves of each elementwise expression in `b` must broadcast together on one device
(`_graphmend_broadcastable`), else the original `a and b` runs, and breaks, as before.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import Kind
from ...astwalk import walk
from ...findings import Finding
from ..compile_checks import BROADCASTABLE, checked_or_original, helper_edits
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..signatures import SCALAR_SHAPE, Signatures
from .conditions import check_condition_pure, condition_text

TITLE = "Combine the 0-d boolean tensors with `torch.{function}` instead of `{op}`: the same value, with no truth value taken"
ELEMENTWISE = (ast.BinOp, ast.Compare, ast.UnaryOp)


class LogicValueFixer:
    codes = frozenset({"GM104"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        operand = ctx.node_for(finding, (ast.expr,))
        boolop = ctx.parent(operand) if operand is not None else None
        if not isinstance(boolop, ast.BoolOp):
            raise DeclineError("not-a-statement", "the tensor's truth value is not taken by `and` / `or`")
        statement = ctx.statement_of(boolop)
        function = ctx.function_of(boolop)
        if function is None or statement is None:
            raise DeclineError("not-in-function", "the expression is not inside a function")
        outer = _outermost_boolop(ctx, boolop)
        kept = isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Return)) and statement.value is outer
        if not kept:
            raise DeclineError("not-a-statement", "the `and` / `or` is not the whole value of an assignment or `return`")
        signatures = Signatures(ctx, set(), at=statement)
        for value in _leaves(outer):
            if not _bool_scalar(ctx, signatures, value):
                raise DeclineError(
                    "logic-not-bool-scalar",
                    f"`{ctx.excerpt(value, 40)}` is not known to be a 0-d bool tensor: `and` / `or` would return it as it is",
                )
        speculative = _speculative(outer)
        for value in speculative:
            role = f"`{ctx.excerpt(value, 40)}` (evaluated even where the original did not)"
            check_condition_pure(ctx, value, role)
            _check_shape_safe(ctx, value, role)
        torch = ctx.torch_name()
        fixed = condition_text(ctx, outer, torch, signatures)  # logical_and/or over the operands as they are
        groups = [group for value in speculative for group in _elementwise_groups(ctx, value)]
        text = fixed if not groups else checked_or_original(fixed, f"{BROADCASTABLE}({', '.join(groups)})", f"({ctx.code(outer)})")
        target = ctx.cst_node(function, outer, cst.BooleanOperation)
        edits = [ctx.rewrite(function, {target: cst.parse_expression(text)})]
        if groups:
            edits += helper_edits(ctx, BROADCASTABLE)
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        name, op = ("logical_and", "and") if isinstance(outer.op, ast.And) else ("logical_or", "or")
        return Fix(finding, TITLE.format(function=name, op=op), Safety.SAFE, tuple(edits))


# Calls that raise on no shape or dtype of a tensor their operands could have: casts, moves,
# whole-tensor reductions that take any dtype, elementwise tests. (`mean` raises on integers,
# `view` and `matmul` on shapes: not here.)
SHAPE_SAFE_METHODS = frozenset(
    {"all", "any", "sum", "amax", "amin", "max", "min", "prod", "to", "float", "double", "half", "bool", "long", "int",
     "detach", "clone", "abs", "isnan", "isinf", "isfinite", "logical_not", "contiguous"}
)  # fmt: skip
SHAPE_SAFE_TORCH = frozenset({"all", "any", "isnan", "isinf", "isfinite", "logical_not", "abs"})
# Elementwise operators that raise on no dtype (`//`, `%` and `**` raise for an integer zero, `&`
# and `~` for floats, `@` on shapes).
SAFE_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _check_shape_safe(ctx: FixContext, value: ast.expr, role: str) -> None:
    """Decline where computing `value` could raise for its operands' shapes or dtypes beyond the
    broadcasting that `_graphmend_broadcastable` settles while tracing."""
    for node in walk(value):
        if isinstance(node, ast.BinOp) and not isinstance(node.op, SAFE_OPERATORS):
            raise DeclineError("logic-may-raise", f"{role} applies `{ctx.excerpt(node, 30)}`, which can raise for some dtypes or shapes")
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise DeclineError("logic-may-raise", f"{role} applies `{ctx.excerpt(node, 30)}`, which can raise for some dtypes")
        if isinstance(node, ast.Call) and node.keywords and not _is_call(ctx, node, "to"):
            raise DeclineError("logic-may-raise", f"{role} calls `{ctx.excerpt(node.func, 30)}` with arguments that may not fit")
        if isinstance(node, ast.Call):
            name = ctx.qualname(node.func)
            if name is not None and name.startswith("torch.") and name.rsplit(".", 1)[1] in SHAPE_SAFE_TORCH and len(node.args) == 1:
                continue
            method = node.func.attr if isinstance(node.func, ast.Attribute) and name is None else None
            if method in SHAPE_SAFE_METHODS and (not node.args or method == "to"):
                continue
            raise DeclineError("logic-may-raise", f"{role} calls `{ctx.excerpt(node.func, 30)}`, which may raise for some shapes")


def _is_call(ctx: FixContext, node: ast.Call, method: str) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == method and ctx.qualname(node.func) is None


def _outermost_boolop(ctx: FixContext, node: ast.BoolOp) -> ast.BoolOp:
    while isinstance(parent := ctx.parent(node), ast.BoolOp):
        node = parent
    return node


def _leaves(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp):
        return [leaf for value in node.values for leaf in _leaves(value)]
    return [node]


def _speculative(node: ast.BoolOp) -> list[ast.expr]:
    """The operands the rewrite evaluates where the original may not: all but the very first leaf."""
    return _leaves(node)[1:]


def _bool_scalar(ctx: FixContext, signatures: Signatures, node: ast.expr) -> bool:
    kind = ctx.kind(node)
    if kind is Kind.BOOL_SCALAR:
        return True
    if kind is not Kind.BOOL:
        return False
    signature = signatures.of(node)
    return signature is not None and signature.shape == SCALAR_SHAPE


def _elementwise_groups(ctx: FixContext, node: ast.expr) -> list[str]:
    """For each largest elementwise expression in `node` (`val <= high.to(val.device)`), its leaves
    as a tuple: where they broadcast together, no step of the expression raises on shapes."""
    groups: list[str] = []
    for inner in walk(node):
        if isinstance(inner, ELEMENTWISE) and not isinstance(ctx.parent(inner), ELEMENTWISE):
            operands = [ctx.code(leaf) for leaf in _elementwise_leaves(inner) if not isinstance(leaf, ast.Constant)]
            if len(set(operands)) > 1:
                groups.append(f"({', '.join(dict.fromkeys(operands))})")
    return groups


def _elementwise_leaves(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [*_elementwise_leaves(node.left), *_elementwise_leaves(node.right)]
    if isinstance(node, ast.Compare):
        return [leaf for part in (node.left, *node.comparators) for leaf in _elementwise_leaves(part)]
    if isinstance(node, ast.UnaryOp):
        return _elementwise_leaves(node.operand)
    return [node]
