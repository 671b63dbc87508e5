"""GM402: `out[m] = src[m]` (and `out[m] += src[m]`, `-=`) -> a fixed-shape `torch.where` copy.

Reading `src[m]` gathers a data-dependent number of elements, so dynamo breaks on it. Written back
through the same mask, the gather is not needed: every position where `m` holds takes `src`'s value,
every other keeps `out`'s, which is what `torch.where(m, src, out)` computes with no data-dependent
shape. Copied into `out` in place (`out.copy_(...)`), the tensor the caller or a view may hold
changes exactly as before:

    if _graphmend_mask_selects_alike(m, out, src):
        out.copy_(torch.where(m, src, out))
    else:
        out[m] = src[m]

The value may also be elementwise arithmetic on one such selection and Python numbers
(`out[m] = src[m] * scale + 1`): `+ - *` and division by a number are correctly rounded per
element, so computing them on every element and keeping the selected ones gives the same values;
their derivative is a finite constant, so the zero gradient `where` sends the unselected elements
stays zero. So may functions that give the same bits per element on every path, vectorised or
not: `abs`, `sign`, `floor`, `ceil`, `trunc`, `relu` (their derivative is finite everywhere, 0 at
NaN and infinities included) and `sqrt` (eager CPU's vectorised sqrt is not correctly rounded, but
a review measured the same bits on a whole tensor and on a gathered selection at every position;
under inductor, which rounds it correctly, the fixed code may differ from the original's eager
fallback in the last bit, as any code a fix brings into the graph may), whose argument must be the
selection itself: it is taken of `torch.where(m, src, 1)`, so an unselected negative or NaN element
sends no NaN into the gradient (`ret[m] = torch.sqrt(x[m])`, pytorch3d's `_sqrt_positive_part`).
Division *by* a tensor, two tensors, and other functions (`exp`, whose vectorised and scalar paths
can differ in the last bit depending on an element's position) are left alone.

`out[m] += value` (or `-=`) with a value that is no selection, a number or a tensor added to
every selected row (SAM's `point_embedding[labels == -1] += self.not_a_point_embed.weight`, a
`(1, dim)` weight over rows of `(batch, points, dim)`), becomes
`out.copy_(torch.where(<m spread over the rows>, out + value, out))` behind
`_graphmend_mask_adds_rows`, which checks that the mask covers `out`'s leading dimensions and the
value broadcasts over one row without growing it. The sums are the same; the added tensor's
gradient sums the same per-row gradients, with zeros for the unselected rows, in another order
(equal up to rounding: the fix's title says so).

Exact only when the mask is boolean with the shape and device of both tensors (a mask over leading
dimensions selects rows, a uint8 mask indexes differently) and the tensors share a dtype (the
assignment casts to `out`'s dtype, `where` would promote). Dynamo knows all of that while tracing,
so the predicate (added once per module) costs no break and the original statement runs wherever it
does not hold. `+=`/`-=` become `torch.where(m, out + src, out)`: the sum is computed everywhere but
kept only where the mask holds, and its gradient is 1 on both sides, so gradients are unchanged too
(a product's would multiply a zero by a possibly infinite factor, so `*=` and `/=` are left alone).
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from ...astwalk import child_nodes, walk
from ...findings import Edit, Finding
from ..compile_checks import MASK_ADDS_ROWS, MASK_SELECTS_ALIKE, SPREAD_MASK, call_text, helper_edits
from ..context import FixContext
from ..cst_function import NodeSwap
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure

TITLE = "Copy with torch.where instead of assigning through a boolean mask"
ROW_ADD_TITLE = "Add with torch.where instead of through a boolean mask"
ROW_ADD_GRADIENT = " (the gradient of the added tensor sums the same values in another order, equal up to rounding)"
_OPERATORS = {ast.Add: "+", ast.Sub: "-"}


class MaskedAssignFixer:
    codes = frozenset({"GM402"})
    narrow = True  # of a selection it rewrites only `out[mask] = src[mask]`
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        subscript = ctx.node_for(finding, (ast.Subscript,))
        if not isinstance(subscript, ast.Subscript):
            raise DeclineError("no-node", "could not find the masked selection in the source")
        statement = ctx.statement_of(subscript)
        function = ctx.function_of(subscript)
        if function is None or not isinstance(statement, (ast.Assign, ast.AugAssign)):
            raise DeclineError("not-a-statement", "the selection is not part of an assignment through the mask")
        return ctx.remember(("masked-assign", id(statement)), lambda: self._plan(finding, ctx, statement, function))

    def _plan(self, finding: Finding, ctx: FixContext, statement: ast.Assign | ast.AugAssign, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Fix:
        target, value = _target_and_value(statement)
        if not isinstance(target, ast.Subscript):
            raise DeclineError("not-a-statement", "only `out[mask] = src[mask]` is rewritten")
        mask = target.slice
        selections = _selections(ctx, value)
        if selections is None and isinstance(statement, ast.AugAssign) and type(statement.op) in _OPERATORS and not _selects_with(ctx, value, mask):
            return self._plan_row_add(finding, ctx, statement, function, target, value)
        if selections is None:
            raise DeclineError("not-a-statement", "only `out[mask] = src[mask]` (with + - * / by numbers, or of selections by the same mask) is rewritten")
        for selection in selections:
            if ctx.code(selection.slice) != ctx.code(mask):
                raise DeclineError("different-masks", f"`{ctx.excerpt(target, 30)}` and `{ctx.excerpt(selection, 30)}` use different indices")
        arithmetic = "" if value is selections[0] else _arithmetic_kind(value)
        operator = ""
        if isinstance(statement, ast.AugAssign):
            operator = _OPERATORS.get(type(statement.op), "")
            if not operator:
                raise DeclineError("augmented-product", "only `+=` and `-=` through a mask keep their gradients as a where")
        copied = [("the copied tensor", s.value) for s in selections]
        for role, node in (("the mask", mask), ("the assigned tensor", target.value), *copied):
            check_pure(ctx, node, f"{role} (now evaluated twice)")
        out, mask_text = ctx.atom(target.value), ctx.code(mask)
        fenced = len(selections) > 1 or _divides_by_selection(value)
        src = _render_fenced(ctx, function, value, selections) if fenced else _render_without_selection(ctx, function, value, selections[0])
        grouped = f"({src})" if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp)) else src
        selected = f"{out} {operator} {grouped}" if operator else src  # `out[m] -= a[m] - b[m]` is `out - (a - b)`
        torch = ctx.torch_name()
        sources = list(dict.fromkeys(ctx.code(s.value) for s in selections))
        arguments = [mask_text, ctx.code(target.value), *sources] + ([f'arithmetic="{arithmetic}"'] if arithmetic else [])
        check = call_text(MASK_SELECTS_ALIKE, *arguments)
        edits = _guarded(ctx, function, statement, check, f"{out}.copy_({torch}.where({mask_text}, {selected}, {out}))", (MASK_SELECTS_ALIKE,))
        return Fix(finding, TITLE, Safety.SAFE, edits)


    def _plan_row_add(
        self,
        finding: Finding,
        ctx: FixContext,
        statement: ast.AugAssign,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        target: ast.Subscript,
        value: ast.expr,
    ) -> Fix:
        """`out[mask] += value` with a value that is not a selection: a number, or a tensor added
        to every selected row (SAM's prompt encoder) -> `out.copy_(torch.where(<mask spread over
        the rows>, out + value, out))` behind `_graphmend_mask_adds_rows`."""
        mask = target.slice
        if isinstance(mask, (ast.Tuple, ast.Slice)) or isinstance(value, ast.Tuple):
            raise DeclineError("not-a-statement", "only `out[mask] += value` with the mask as the whole index is rewritten")
        for role, node in (("the mask", mask), ("the assigned tensor", target.value), ("the added value", value)):
            check_pure(ctx, node, f"{role} (now evaluated twice)")
        out, mask_text, written = ctx.atom(target.value), ctx.code(mask), ctx.code(target.value)
        check = call_text(MASK_ADDS_ROWS, mask_text, written, ctx.code(value))
        spread = call_text(SPREAD_MASK, mask_text, written, "0")
        operator = _OPERATORS[type(statement.op)]
        replacement = f"{out}.copy_({ctx.torch_name()}.where({spread}, {out} {operator} {ctx.atom(value)}, {out}))"
        edits = _guarded(ctx, function, statement, check, replacement, (MASK_ADDS_ROWS, SPREAD_MASK))
        title = ROW_ADD_TITLE if _is_number(ctx, value) else ROW_ADD_TITLE + ROW_ADD_GRADIENT
        return Fix(finding, title, Safety.SAFE, edits)


def _guarded(
    ctx: FixContext,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    statement: ast.stmt,
    check: str,
    replacement: str,
    helpers: tuple[str, ...],
) -> tuple[Edit, ...]:
    """The edits that put `if <check>: <replacement> else: <the statement as it was>` in place of
    `statement`, with the predicates `helpers` defined in the module (and `import torch` where it
    lacks one)."""
    if _shares_a_line(ctx, statement):
        raise DeclineError("several-statements", "the line holds more than one statement")
    line = ctx.cst_node(function, statement, cst.SimpleStatementLine)
    assert isinstance(line, cst.SimpleStatementLine)
    original = ctx.render(function, line.with_changes(leading_lines=[]))
    code = f"if {check}:\n    {replacement}\nelse:\n" + textwrap.indent(original, "    ")
    try:
        new_statements = list(cst.parse_module(code).body)
    except cst.ParserSyntaxError as exc:  # a bug in this fixer: never write code that does not parse
        raise DeclineError("generated-code", f"the generated code does not parse ({exc.message})") from exc
    new_statements[0] = new_statements[0].with_changes(leading_lines=line.leading_lines)
    helper_texts = [edit for name in helpers for edit in helper_edits(ctx, name)]  # `import torch` first where the module lacks it
    edits = [ctx.rewrite(function, {line: cst.FlattenSentinel(new_statements)}), *helper_texts]
    import_edit = None if helper_texts else ctx.import_edit()
    if import_edit is not None:
        edits.append(import_edit)
    return tuple(edits)


def _selects_with(ctx: FixContext, value: ast.expr, mask: ast.expr) -> bool:
    """Whether `value` indexes anything with `mask` (then it is the selection path's to decline)."""
    text = ctx.code(mask)
    return any(isinstance(n, ast.Subscript) and ctx.code(n.slice) == text for n in walk(value))


def _target_and_value(statement: ast.Assign | ast.AugAssign) -> tuple[ast.expr | None, ast.expr]:
    if isinstance(statement, ast.AugAssign):
        return statement.target, statement.value
    return (statement.targets[0] if len(statement.targets) == 1 else None), statement.value


def _shares_a_line(ctx: FixContext, statement: ast.stmt) -> bool:
    """Another statement on the statement's lines (`a = b; out[m] = src[m]`)."""
    parent = ctx.parent(statement)
    siblings = [n for n in child_nodes(parent) if isinstance(n, ast.stmt)] if parent is not None else []
    end = statement.end_lineno or statement.lineno
    return any(s is not statement and s.lineno <= end and (s.end_lineno or s.lineno) >= statement.lineno for s in siblings)


# Functions exact per element on every path, with the value an unselected element is replaced by
# first where their derivative is not finite everywhere (None: any value is harmless).
_EXACT_FUNCTIONS: dict[str, str | None] = {"abs": None, "sign": None, "floor": None, "ceil": None, "trunc": None, "relu": None, "sqrt": "1"}
_FLOATING_ONLY = frozenset({"floor", "ceil", "trunc", "sqrt"})  # what they give an integer tensor is not its dtype (or not exact)


def _exact_function(ctx: FixContext, value: ast.expr) -> tuple[str, ast.expr] | None:
    """`torch.sqrt(a)` / `a.sqrt()` (a function of `_EXACT_FUNCTIONS`, one argument, no keywords):
    its name and argument."""
    if not isinstance(value, ast.Call) or value.keywords or not isinstance(value.func, ast.Attribute):
        return None
    name = value.func.attr
    if name not in _EXACT_FUNCTIONS:
        return None
    if not value.args and ctx.qualname(value.func) is None:  # a method: `x[m].sqrt()`
        return name, value.func.value
    if len(value.args) == 1 and ctx.qualname(value.func) == f"torch.{name}":
        return name, value.args[0]
    return None


def _selection(ctx: FixContext, value: ast.expr) -> ast.Subscript | None:
    """The one `src[mask]` in `value`, when `value` is it or elementwise arithmetic on it and
    Python numbers (`src[m] * 2 - 1`, `-src[m] / scale`) and functions exact per element
    (`torch.sqrt(src[m]) * 2`); None otherwise."""
    if isinstance(value, ast.Subscript):
        return value
    function = _exact_function(ctx, value)
    if function is not None:
        name, argument = function
        if _EXACT_FUNCTIONS[name] is not None and not isinstance(argument, ast.Subscript):
            return None  # the fill must be of the selection itself: `sqrt(-x[m])` would take sqrt(-1)
        return _selection(ctx, argument)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return _selection(ctx, value.operand)
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _is_number(ctx, value.left), _is_number(ctx, value.right)
        if right and not left:
            return _selection(ctx, value.left)
        if left and not right and not isinstance(value.op, ast.Div):  # n / src: 1/0 in the unselected part
            return _selection(ctx, value.right)
    return None


def _selections(ctx: FixContext, value: ast.expr) -> list[ast.Subscript] | None:
    """The selections `src[mask]` that `value` combines: the one `_selection` finds, or several
    joined by `+ - * /` (`(x2[m] - x1[m]) * (y2[m] - y1[m])`, torchvision's box overlap), each
    side arithmetic on selections and Python numbers. None when anything else is in it."""
    single = _selection(ctx, value)
    if single is not None:
        return [single]
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return _selections(ctx, value.operand)
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div))):
        return None
    left_number, right_number = _is_number(ctx, value.left), _is_number(ctx, value.right)
    if left_number or right_number:
        return None if left_number and right_number else _selections(ctx, value.right if left_number else value.left)
    left, right = _selections(ctx, value.left), _selections(ctx, value.right)
    return left + right if left is not None and right is not None else None


def _divides_by_selection(value: ast.expr) -> bool:
    """A division whose divisor reads a selection (`n / x[m]`, `a[m] / b[m]`): at an unselected
    element it may divide by 0."""
    return any(
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and any(isinstance(n, ast.Subscript) for n in walk(node.right))
        for node in walk(value)
    )


def _render_fenced(ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, value: ast.expr, selections: list[ast.Subscript]) -> str:
    """`value`'s source with each `src[mask]` replaced by `torch.where(mask, src, src.detach())`:
    the same values, computed on every element, and a gradient that reaches `src` only where the
    mask holds. At an unselected element a product or quotient of several tensors may be inf or
    NaN (`0 * inf` in its backward); the unselected part of the result is dropped and the where's
    backward selects (it does not multiply), so no NaN reaches any input's gradient."""
    torch = ctx.torch_name()
    whole = ctx.cst_node(function, value, cst.BaseExpression)  # type: ignore[type-abstract]
    fences: dict[cst.CSTNode, cst.CSTNode] = {}
    for selection in selections:
        inner = ctx.cst_node(function, selection, cst.Subscript)
        assert isinstance(inner, cst.Subscript)
        source = ctx.render(function, inner.value)
        fences[inner] = cst.parse_expression(f"{torch}.where({ctx.code(selection.slice)}, {source}, {ctx.atom(selection.value)}.detach())")
    fenced = whole.visit(NodeSwap(fences))
    assert isinstance(fenced, cst.BaseExpression)
    return ctx.render(function, fenced)


def _is_number(ctx: FixContext, node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and _is_number(ctx, node.operand)


def _arithmetic_kind(value: ast.expr) -> str:
    """"integer" when only ints are added, subtracted and multiplied (any non-bool dtype keeps
    its dtype), else "floating" (a float or `/` keeps only a floating dtype)."""
    for node in walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return "floating"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FLOATING_ONLY:
            return "floating"
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return "floating"
    return "integer"


def _render_without_selection(
    ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, value: ast.expr, selection: ast.Subscript
) -> str:
    """`value`'s source with `src[mask]` replaced by `src` (libcst keeps its layout and parentheses),
    or by `torch.where(mask, src, fill)` where it is the argument of a function that needs a fill."""
    inner = ctx.cst_node(function, selection, cst.Subscript)
    assert isinstance(inner, cst.Subscript)
    if value is selection:
        return ctx.render(function, inner.value)
    replacement: cst.BaseExpression = inner.value
    fill = _fill_of(ctx, value, selection)
    if fill is not None:
        source = f"{ctx.torch_name()}.where({ctx.code(selection.slice)}, {ctx.render(function, inner.value)}, {fill})"
        replacement = cst.parse_expression(source)
    whole = ctx.cst_node(function, value, cst.BaseExpression)  # type: ignore[type-abstract]
    return ctx.render(function, whole.deep_replace(inner, replacement))


def _fill_of(ctx: FixContext, value: ast.expr, selection: ast.Subscript) -> str | None:
    """The fill of the function in `value` whose argument is `selection`, if it needs one."""
    for node in walk(value):
        function = _exact_function(ctx, node) if isinstance(node, ast.Call) else None
        if function is not None and function[1] is selection:
            return _EXACT_FUNCTIONS[function[0]]
    return None
