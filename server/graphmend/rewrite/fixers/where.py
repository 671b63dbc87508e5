"""GM101/GM102: a branch on a tensor value -> `torch.where`, when that provably keeps the meaning.

`torch.where(c, a, b)` computes both `a` and `b` and selects element-wise, so the rewrite is only
equivalent to the branch when (taxonomy §2.1, demos d1-d9):
- the condition is a single tensor value (0-d), so every element selects the same branch;
- both branch values are tensors (`torch.where` turns a Python number into a tensor);
- the branches are pure and cannot raise (purity.py): the branch not taken is evaluated too;
- every name the rewrite assigns is defined on both paths;
- both values have the same dtype and shape (signatures.py), or `where` would promote/broadcast;
- where a branch applies a function undefined on part of its domain or that overflows (sqrt, log,
  division, exp, powers...), its argument is masked too ("double where"), so the gradient through
  the branch not taken stays finite instead of becoming NaN.
Forms: if/else and elif chains assigning names, a no-else update (`if c: x = f(x)`), returns in
both branches or an early return followed by the fall-through return, and `a if c else b`. An
in-place update in a branch (`if c: y /= s`) of a local tensor no other name can see becomes a
rebinding first (aliasing.py): the same to every reader of `y`. A
Python-level prefix of an `and` chain (`if mask is not None and not torch.all(mask == 1):`) stays
a Python `if` (dynamo knows its value), and only the tensor part becomes a `where`.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field, replace

import libcst as cst

from ...analysis import analyze_detailed
from ...analysis.kinds import BOOL_KINDS, TENSOR_KINDS, Kind
from ...astwalk import child_nodes, walk
from ...findings import Edit, Finding
from ...quoting import excerpt
from ...textedits import apply_edits, text_edits
from ..aliasing import aliasing_reason
from ..compile_checks import BROADCAST_FREE, NUMBER_DTYPE, ONE_VALUE, SAME_TYPE, call_text, helper_edits
from ..context import FixContext, char_offset
from ..flow import changed_in_place_after, defined_before, read_after
from ..inline import inlined_return_edits
from ..model import DeclineError, Fix, Safety
from ..purity import GENERATED_PREDICATES, check_pure
from ..signatures import SCALAR_SHAPE, UNKNOWN, Signatures, floating_names
from .conditions import chained_comparison_text, check_condition_pure, condition_text, number_comparison_text, tensor_logic
from .generated import flush_blank_lines

# Functions whose value or derivative is infinite or NaN for some finite input (outside their
# domain, at a pole, or by overflow: `exp(100.0)` is inf in float32, `x ** 0.5` has an infinite
# derivative at 0), with an input where both are finite. On the path not taken the gradient is
# `0 * f'(x)`, NaN when f'(x) is infinite: the argument is masked to the safe value there.
RESTRICTED = {
    "sqrt": "1", "rsqrt": "1", "log": "1", "log2": "1", "log10": "1", "reciprocal": "1", "log1p": "0",
    "acos": "0", "asin": "0", "atanh": "0", "acosh": "2", "erfinv": "0", "logit": "0.5", "lgamma": "1", "digamma": "1",
    "exp": "0", "exp2": "0", "expm1": "0", "sinh": "0", "cosh": "0", "tan": "0", "pow": "1", "float_power": "1",
}

# Divisions by their second argument (a method's first): the divisor is masked to 1, as `/`'s.
DIVISIONS = frozenset({"div", "divide", "true_divide", "floor_divide", "remainder", "fmod"})


@dataclass
class _Branch:
    test: ast.expr | None  # None: the else branch (or the value before the if)
    body: list[ast.stmt]
    values: dict[str, ast.expr] = field(default_factory=dict)  # the value each name ends with
    texts: dict[str, str] = field(default_factory=dict)  # ...when a temporary already holds it
    renames: dict[str, str] = field(default_factory=dict)  # name -> temporary, as the branch goes on
    value_renames: dict[str, dict[str, str]] = field(default_factory=dict)  # the renames a final value sees


def _assigns(statements: list[ast.stmt], name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for s in statements for n in walk(s))


def _plain_assignment(statement: ast.stmt) -> ast.stmt:
    """`name: T = value` as `name = value`: a local's annotation is never evaluated (PEP 526), so
    the selection that replaces the branches may drop it (torchgeo's
    `coord_embed: nn.Parameter | Tensor = self.coord_token`). Any other statement as it is."""
    if isinstance(statement, ast.AnnAssign) and statement.simple and isinstance(statement.target, ast.Name) and statement.value is not None:
        return ast.copy_location(ast.Assign(targets=[statement.target], value=statement.value), statement)
    return statement


def _reads(statements: list[ast.stmt], name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for s in statements for n in walk(s))


CHECKED_TITLE = (
    "Select with torch.where instead of branching on a tensor, where dynamo knows while tracing that the values "
    "have one dtype and shape (elsewhere the branch runs as before)"
)
ONE_VALUE_TITLE = (
    "Select with torch.where instead of branching on a tensor, where dynamo knows while tracing that the condition "
    "is one value (elsewhere the branch runs as before)"
)
BOTH_CHECKED_TITLE = (
    "Select with torch.where instead of branching on a tensor, where dynamo knows while tracing that the condition "
    "is one value and the values have one dtype and shape (elsewhere the branch runs as before)"
)
COND_TITLE = "Select with torch.cond instead of branching on a tensor (only the chosen branch runs)"


class WhereFixer:
    codes = frozenset({"GM101", "GM102", "GM201", "GM203", "GM207"})  # GM20x: `if t.item() > 0:`
    safety = Safety.SAFE
    title = "Select with torch.where instead of branching on a tensor"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.expr,))
        if not isinstance(node, ast.expr):
            raise DeclineError("no-node", "could not find the condition in the source")
        function = ctx.function_of(node)
        if function is None:
            raise DeclineError("not-in-function", "the branch is not inside a function")
        if finding.code == "GM102" or (finding.code in ("GM201", "GM203", "GM207") and _in_ternary_test(ctx, node)):
            return self._ternary(finding, ctx, function, node)
        statement = _enclosing_if(ctx, node)
        if statement is None:
            raise DeclineError("not-an-if", "the tensor condition is not the test of an `if` statement")
        def plan_once() -> Fix:
            try:
                return _IfRewrite(finding, ctx, function, statement).build()
            except DeclineError as error:
                if error.key != "statement":
                    raise
                reasons: list[DeclineError] = []
                # `y /= s` in a branch: as `y = y / (s)`, when no other name sees `y`'s tensor;
                # `y = x * w; return y.relu()`: as `return (x * w).relu()`
                for variant in (_plan_with_rebound_updates, _plan_with_inlined_returns):
                    try:
                        return variant(finding, ctx, function, statement, error)
                    except DeclineError as specific:
                        reasons.append(specific)
                raise next((r for r in reasons if r is not error), error) from None

        planned = ctx.remember_or_decline(("where", id(statement)), plan_once)  # one plan for every finding in the `if`
        return replace(planned, finding=finding)

    # -- a if c else b ------------------------------------------------------------------------
    def _ternary(self, finding: Finding, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.expr) -> Fix:
        ifexp = next((a for a in [node, *ctx.ancestors(node)] if isinstance(a, ast.IfExp) and ctx.contains(a.test, node)), None)
        if ifexp is None:
            raise DeclineError("not-an-if", "the tensor condition is not the test of a conditional expression")
        torch = ctx.torch_name()
        signatures = Signatures(ctx, floating_names(ctx, function, ctx.statement_of(ifexp)), at=ctx.statement_of(ifexp))
        condition = condition_text(ctx, ifexp.test, torch, signatures)
        for value, role in ((ifexp.body, "the value when true"), (ifexp.orelse, "the value when false")):
            _require_tensor(ctx, value, role)
            check_pure(ctx, value, role)
        try:
            _require_same_type(ctx, signatures, [ifexp.body, ifexp.orelse], "the two values")
        except DeclineError as unproven:
            if unproven.key != "dtype-shape-unproven":
                raise
            return _plan_ternary_as_if(finding, ctx, ifexp, unproven)
        _check_not_a_nan_guard(ctx, [ifexp.test], [ifexp.body, ifexp.orelse], "the two values")
        true_text = _mask_restricted(ctx, ifexp.body, torch, condition, selected=True)
        false_text = _mask_restricted(ctx, ifexp.orelse, torch, condition, selected=False)
        replacement = cst.parse_expression(where_call(torch, condition, true_text, false_text))
        target = ctx.cst_node(function, ifexp, cst.IfExp)
        edits = [ctx.rewrite(function, {target: replacement})]
        return _with_import(ctx, finding, edits, self.title)


_REBOUND_MARK = "# graphmend: was an in-place update"
_UPDATE_OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}  # fmt: skip


def _branch_statements(statement: ast.If) -> list[ast.stmt]:
    """The statements directly in the branches of an if/elif/else chain."""
    found: list[ast.stmt] = []
    current: ast.If | None = statement
    while current is not None:
        found += current.body
        orelse = current.orelse
        current = orelse[0] if len(orelse) == 1 and isinstance(orelse[0], ast.If) else None
        if current is None:
            found += orelse
    return found


def _plan_with_rebound_updates(finding: Finding, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.If, declined: DeclineError) -> Fix:
    """`if c: y /= s` -> `y = torch.where(c, y / (s), y)`, when `y` is a local tensor no other name
    can see (aliasing.py): then updating it in place and rebinding it to a new tensor are the
    same to every reader. The branches are rewritten as `y = y / (s)`, the file analysed again and
    the `where` planned on that text. Where dtypes or shapes are only checked while tracing, the
    original branches kept as the fallback get their in-place updates back (an in-place op never
    promotes or broadcasts its target: with other dtypes it raises, as before). The edits
    replace the whole `if`, so they apply to the original text unchanged."""
    updates = [s for s in _branch_statements(statement) if isinstance(s, ast.AugAssign)]
    if not updates:
        raise declined
    edits: list[Edit] = []
    restore: dict[str, str] = {}
    for update in updates:
        symbol = _UPDATE_OPERATORS.get(type(update.op))
        if symbol is None:
            raise declined
        if update.end_lineno != update.lineno:
            raise DeclineError("statement", f"a branch updates a tensor in place over several lines (`{excerpt(ctx.code(update).splitlines()[0], 40)}`)")
        reason = aliasing_reason(ctx, function, update)
        if reason is not None:
            raise DeclineError("in-place-aliased", f"`{ctx.excerpt(update, 40)}` changes a tensor in place, and {reason}")
        target = ctx.code(update.target)
        rebinding = f"{target} = {target} {symbol} {ctx.atom(update.value)}"
        # marked, so every line the rewrite keeps from the branches can be given its update back
        marked = f"{rebinding}  {_REBOUND_MARK}"
        edits.append(Edit(ctx.span(update), marked))
        restore[marked] = ctx.code(update)
    fix, fixed = _planned_on_variant(finding, ctx, apply_edits(ctx.text, edits), declined)
    for marked, original in restore.items():
        fixed = fixed.replace(marked, original)
    if _REBOUND_MARK in fixed:
        raise DeclineError("statement", "the rewrite would keep a rewritten in-place update")
    names = ", ".join(dict.fromkeys(f"`{ctx.code(u.target)}`" for u in updates))
    title = f"{fix.title} (in-place updates of {names}, a local tensor no other name refers to, become rebindings)"
    return replace(fix, title=title, edits=tuple(text_edits(ctx.text, fixed)))


def _plan_ternary_as_if(finding: Finding, ctx: FixContext, ifexp: ast.IfExp, declined: DeclineError) -> Fix:
    """`y = a if c else b` (or `return a if c else b`) whose values' dtypes and shapes are not
    proven, as the `if` statement it amounts to: the `if` rewrite compares them while tracing and
    keeps the branches where they differ. The file is analysed again with the statement written
    as an `if` (the condition moved to the `if` line) and the `where` planned on that text."""
    statement = ctx.parent(ifexp)
    line = ctx.text.splitlines()[statement.lineno - 1] if isinstance(statement, ast.stmt) else ""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        head = f"{statement.targets[0].id} = "
    elif isinstance(statement, ast.Return):
        head = "return "
    else:
        raise declined
    if statement.lineno != statement.end_lineno or ";" in line or not line.rstrip().endswith(ctx.code(ifexp)):
        raise declined  # one statement on a line of its own, the conditional expression all of its value
    indent = line[: len(line) - len(line.lstrip())]
    test = ctx.code(ifexp.test)
    variant = (
        f"{indent}if {test}:\n{indent}    {head}{ctx.code(ifexp.body)}\n"
        f"{indent}else:\n{indent}    {head}{ctx.code(ifexp.orelse)}"
    )
    edits = [Edit(ctx.span(statement), variant.lstrip())]
    at = ctx.span(ifexp.test)
    shift = len(indent) + 3 - at.start_col  # the test now starts after `if ` on the same line
    span = finding.span
    if span.start_line != at.start_line or span.end_line != at.start_line:
        raise declined
    moved = replace(finding, span=replace(span, start_col=span.start_col + shift, end_col=span.end_col + shift))
    fix, fixed = _planned_on_variant(moved, ctx, apply_edits(ctx.text, edits), declined)
    return replace(fix, finding=finding, edits=tuple(text_edits(ctx.text, fixed)))


def _plan_with_inlined_returns(finding: Finding, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.If, declined: DeclineError) -> Fix:
    """A branch that assigns names and then returns, as the one `return` it amounts to
    (rewrite/inline.py): the file is analysed again with the branches inlined and the `where`
    planned on that text; the edits replace the whole `if`, so they apply to the original text."""
    edits = inlined_return_edits(ctx, statement)
    if not edits or any(e.span.start_line <= finding.span.end_line for e in edits):
        raise declined  # nothing to inline, or the tested condition sits after an inlined branch
    fix, fixed = _planned_on_variant(finding, ctx, apply_edits(ctx.text, edits), declined)
    title = f"{fix.title} (the names a returning branch assigns are inlined into its return)"
    return replace(fix, title=title, edits=tuple(text_edits(ctx.text, fixed)))


def _planned_on_variant(finding: Finding, ctx: FixContext, variant_text: str, declined: DeclineError) -> tuple[Fix, str]:
    """The `where` planned on `variant_text` (the file with the `if`'s branches rewritten, the
    finding's condition where it was), and the text that fix gives."""
    result = analyze_detailed(variant_text, ctx.result.path, ctx.result.config, keep_facts=True)
    if result.tree is None:
        raise declined
    variant = FixContext(result)
    node = variant.node_for(finding, (ast.expr,))
    variant_function = variant.function_of(node) if isinstance(node, ast.expr) else None
    variant_statement = _enclosing_if(variant, node) if isinstance(node, ast.expr) else None
    if variant_function is None or variant_statement is None:
        raise declined
    fix = _IfRewrite(finding, variant, variant_function, variant_statement).build()
    return fix, apply_edits(variant_text, fix.edits)


WIDTH = 88  # beyond this, each argument of the generated call goes on its own line


def where_call(torch: str, condition: str, true_value: str, false_value: str) -> str:
    one_line = f"{torch}.where({condition}, {true_value}, {false_value})"
    if len(one_line) <= WIDTH and "\n" not in one_line:
        return one_line
    arguments = "".join(f"    {textwrap.indent(a, '    ').lstrip()},\n" for a in (condition, true_value, false_value))
    return f"{torch}.where(\n{arguments})"


def cond_call(torch: str, condition: str, true_value: str, false_value: str) -> str:
    one_line = f"{torch}.cond({condition}, lambda: {true_value}, lambda: {false_value})"
    if len(one_line) <= WIDTH and "\n" not in one_line:
        return one_line
    arguments = "".join(
        f"    {textwrap.indent(a, '    ').lstrip()},\n" for a in (condition, f"lambda: {true_value}", f"lambda: {false_value}")
    )
    return f"{torch}.cond(\n{arguments})"


# Layers and operations whose cost makes evaluating both branches wasteful.
_COSTLY_FUNCTIONS = frozenset(
    {"matmul", "bmm", "mm", "einsum", "linear", "conv1d", "conv2d", "conv3d", "scaled_dot_product_attention", "baddbmm"}
)


def _costly(ctx: FixContext, value: ast.expr) -> bool:
    for node in walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return True
        if not isinstance(node, ast.Call):
            continue
        name = ctx.qualname(node.func)
        if name is not None and name.rsplit(".", 1)[1] in _COSTLY_FUNCTIONS:
            return True
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            function = ctx.function_of(node)
            owner = ctx.index.owner.get(id(function)) if function is not None else None
            if owner is not None and owner.attr_torch_classes.get(func.attr) in _PARAMETRIC_LAYERS:
                return True
    return False


_PARAMETRIC_LAYERS = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Embedding"}
)


def _with_import(ctx: FixContext, finding: Finding, edits: list, title: str) -> Fix:
    import_edit = ctx.import_edit()
    if import_edit is not None:
        edits.append(import_edit)
    return Fix(finding, title, Safety.SAFE, tuple(edits))


def _in_ternary_test(ctx: FixContext, node: ast.expr) -> bool:
    return any(isinstance(a, ast.IfExp) and ctx.contains(a.test, node) for a in [node, *ctx.ancestors(node)])


def _enclosing_if(ctx: FixContext, node: ast.expr) -> ast.If | None:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If) and ctx.contains(ancestor.test, node):
            top = ancestor
            while True:  # climb an elif chain to its first `if`
                parent = ctx.parent(top)
                if isinstance(parent, ast.If) and len(parent.orelse) == 1 and parent.orelse[0] is top:
                    top = parent
                else:
                    return top
        if isinstance(ancestor, ast.stmt):
            return None
    return None


def _require_tensor(ctx: FixContext, node: ast.expr, role: str) -> None:
    kind = ctx.kind(node)
    if kind not in TENSOR_KINDS:
        what = "a Python value" if kind.name in ("PY", "NONE", "PY_SEQ") else "not known to be a tensor"
        raise DeclineError("not-tensor", f"`{ctx.excerpt(node, 40)}` ({role}) is {what}; torch.where would turn it into a tensor")


def _describe(ctx: FixContext, node: ast.expr) -> str:
    if not hasattr(node, "lineno"):  # the name itself, standing for its value before the `if`
        return ast.unparse(node)
    return ctx.excerpt(node, 30)


_NON_FINITE_TESTS = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf"})


def _check_not_a_nan_guard(ctx: FixContext, tests: list[ast.expr], values: list[ast.expr], role: str) -> None:
    """A branch taken when a tensor holds NaN or infinity, whose values do not all read that
    tensor, discards it: `where` (and `torch.cond`) still send a zero gradient into the discarded
    value, and its own backward turns 0 * NaN into NaN - gradients the original never had."""
    guarded: set[str] = set()
    for test in tests:
        for node in walk(test):
            if isinstance(node, ast.Call):
                name = ctx.qualname(node.func)
                leaf = name.rsplit(".", 1)[1] if name else node.func.attr if isinstance(node.func, ast.Attribute) else ""
                if leaf in _NON_FINITE_TESTS:
                    argument = node.args[0] if name and node.args else node.func.value if isinstance(node.func, ast.Attribute) else None
                    guarded |= {n.id for n in walk(argument) if isinstance(n, ast.Name)} if argument is not None else {"?"}
    if not guarded:
        return
    for value in values:
        if not guarded & _differentiable_names(value):
            raise DeclineError(
                "nan-guard",
                f"{role} include `{ctx.excerpt(value, 30)}`, which drops the value tested for NaN/infinity: computing both sides "
                "would send NaN gradients into it (the original sends none)",
            )


# Calls and attributes whose result carries no gradient back to their tensor argument.
_NO_GRADIENT_CALLS = frozenset(
    {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "new_zeros", "new_ones", "new_full",
     "new_empty", "detach", "size", "dim", "numel"}
)
_NO_GRADIENT_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "data"})


def _differentiable_names(value: ast.AST) -> set[str]:
    """The names `value` depends on through something that passes gradients back."""
    if isinstance(value, ast.Call):
        func = value.func
        leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if leaf in _NO_GRADIENT_CALLS:
            return set()
    if isinstance(value, ast.Attribute) and value.attr in _NO_GRADIENT_ATTRIBUTES:
        return set()
    if isinstance(value, ast.Name):
        return {value.id}
    return {name for child in child_nodes(value) for name in _differentiable_names(child)}


# Elementwise functions of one tensor: whatever its shape, they cannot raise for a shape reason
# (given Python numbers, not tensors, for their other arguments).
_SHAPE_SAFE_CALLS = frozenset(
    {
        "abs", "neg", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
        "sigmoid", "relu", "gelu", "silu", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "float",
        "double", "half", "bfloat16", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "square", "clone",
        "detach", "contiguous", "zeros_like", "ones_like", "empty_like",
    }
)  # not `to` (a device can be missing), not `pow` (an integer to a negative power raises)


# Full reductions (no arguments): one value, which broadcasts with anything. The second set raises on
# an empty tensor, so it is accepted only where the branch's test computes the same expression.
_FULL_REDUCTIONS = frozenset({"sum", "mean", "nansum", "prod", "all", "any", "norm", "count_nonzero"})
_FULL_REDUCTIONS_RAISING_ON_EMPTY = frozenset({"max", "min", "amax", "amin"})
# Full reductions that raise on integer tensors: computed ahead only of a tensor known floating.
_FLOATING_REDUCTIONS = frozenset({"mean", "norm"})


def _full_reduction_operand(ctx: FixContext, node: ast.AST, evaluated: frozenset[str]) -> ast.expr | None:
    """`t` of `t.sum()` / `torch.sum(t)` (one value, computed without a shape error when `t` is)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.keywords:
        return None
    name, leaf = ctx.qualname(node.func) or "", node.func.attr
    if name == f"torch.{leaf}" and len(node.args) == 1:
        operand = node.args[0]
    elif not name.startswith("torch.") and not node.args:
        operand = node.func.value
    else:
        return None
    if leaf in _FULL_REDUCTIONS or (leaf in _FULL_REDUCTIONS_RAISING_ON_EMPTY and ctx.code(node) in evaluated):
        return operand
    return None


def _casts_to_a_dtype(ctx: FixContext, call: ast.Call, signatures: Signatures) -> bool:
    """`t.to(<a dtype>)`: `torch.float32`, `x.dtype`, or the dtype GraphMend's number helper names
    (a `.to` that moves to a device may raise where the device is missing; a cast cannot)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "to" and len(call.args) == 1 and not call.keywords):
        return False
    argument = call.args[0]
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and argument.func.id == NUMBER_DTYPE:
        return True
    dtype = signatures.dtype_argument(argument)
    return dtype != UNKNOWN and dtype != ("const", "bool")  # `1 - t.to(torch.bool)` raises


def _cannot_raise_on_shapes(
    ctx: FixContext, value: ast.expr, signatures: Signatures, evaluated: frozenset[str] = frozenset(), single: frozenset[str] = frozenset()
) -> bool:
    """`value` combines tensors of one shape (one name, names of one known shape, and 0-d tensors
    such as full reductions, which broadcast with anything) and Python numbers through elementwise
    operations, so computing it on a path where the original did not cannot raise a shape mismatch
    (tensors of unknown shapes can: `torch.cat((a, b))` of a placeholder, `x * scale` of an
    unrelated size). `evaluated` holds the code of expressions the original computes on every path
    (the branch's test): `x / x.abs().max()` under `if x.abs().max() > c` adds no new error;
    `single` the names of tensors the test reads as one value (`_one_element_names`)."""
    shapes = _operand_shapes(ctx, value, signatures, evaluated, single)
    return shapes is not None and len(shapes) <= 1


def _operands_to_match(
    ctx: FixContext, value: ast.expr, signatures: Signatures, evaluated: frozenset[str], single: frozenset[str]
) -> tuple[str, ...] | None:
    """The names of tensors of unknown shapes that `value` combines elementwise, when that is all
    that could make computing it raise: where a check made while tracing finds them floating, on
    one device and of one shape apart from one-element tensors, it cannot (`0.9 * ema + 0.1 * x`,
    `x + noise * (sigma_hat**2 - sigma**2) ** 0.5` with 0-d sigmas). None where something else
    could raise."""
    names: list[str] = []
    shapes = _operand_shapes(ctx, value, signatures, evaluated, single, names)
    if shapes is None:
        return None
    for node in walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)):
            return None  # raises on floating tensors, which the check asks for
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
            return None
        if isinstance(node, ast.Name) and ctx.kind(node) is Kind.PY and _parameter_without_number_annotation(ctx, node):
            return None  # a Python number only by its default: a caller may pass a tensor of any shape
    return tuple(dict.fromkeys(names))  # every one checked: two names of one shape may differ in dtype


def _parameter_without_number_annotation(ctx: FixContext, name: ast.Name) -> bool:
    """`name` is a parameter of its function not annotated `int`, `float` or `bool` (its kind may
    come from a default value alone)."""
    function = ctx.function_of(name)
    if function is None:
        return False
    arguments = function.args
    for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        if argument.arg == name.id:
            annotation = argument.annotation
            return not (isinstance(annotation, ast.Name) and annotation.id in ("int", "float", "bool"))
    return False


def _operand_shapes(
    ctx: FixContext,
    value: ast.expr,
    signatures: Signatures,
    evaluated: frozenset[str] = frozenset(),
    single: frozenset[str] = frozenset(),
    names: list[str] | None = None,
) -> dict[object, str] | None:
    """`value`'s tensor operands' shapes (a name of unknown shape stands for its own), in order,
    each with the name that has it, or None where computing it could raise whatever the shapes
    (see `_cannot_raise_on_shapes`). `names` receives every name that may hold a tensor, those of
    one shape and those of one element included."""
    tensors: dict[object, str] = {}  # the shapes of names that may hold tensors (a name stands for its own)
    pending: list[ast.AST] = [value]
    while pending:
        node = pending.pop()
        reduced = _full_reduction_operand(ctx, node, evaluated)
        if reduced is not None:  # one value: its operand only has to be computable on its own
            if not _cannot_raise_on_shapes(ctx, reduced, signatures, evaluated, single):
                return None
            floating_only = node.func.attr in _FLOATING_REDUCTIONS  # type: ignore[attr-defined]
            if floating_only and ctx.code(node) not in evaluated and not signatures.is_floating(signatures.of(reduced).dtype):
                return None  # `t.mean()` of an integer tensor raises
            continue
        pending.extend(child_nodes(node))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return None  # not elementwise: `x @ x` raises for a non-square `x`
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod, ast.Pow)):
            if not (isinstance(node.right, ast.Constant) and isinstance(node.right.value, (int, float)) and node.right.value > 0):
                return None  # an integer tensor // 0, % 0 or ** -1 raises
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop, ast.expr_context, ast.keyword)):
            continue
        if isinstance(node, ast.Name):
            if names is not None and ctx.kind(node) not in (Kind.PY, Kind.NONE) and ctx.qualname(node) != "torch" and not (
                isinstance(ctx.parent(node), ast.Call) and ctx.parent(node).func is node  # type: ignore[union-attr]
            ):
                names.append(node.id)
            if node.id in single:
                continue  # one element: broadcasts with anything
            caller = ctx.parent(node)
            if isinstance(caller, ast.Call) and caller.func is node:
                continue  # the function called, not an operand: the call itself is vetted below
            if ctx.kind(node) not in (Kind.PY, Kind.NONE) and ctx.qualname(node) != "torch":  # not the module
                shape = signatures.of(node).shape
                if shape != SCALAR_SHAPE:
                    tensors.setdefault(node.id if shape == UNKNOWN else shape, node.id)
            continue
        if isinstance(node, ast.Attribute) and isinstance(ctx.parent(node), ast.Call) and ctx.parent(node).func is node:  # type: ignore[union-attr]
            if node.attr not in _SHAPE_SAFE_CALLS and not _casts_to_a_dtype(ctx, ctx.parent(node), signatures):  # type: ignore[arg-type]
                return None
            continue
        if isinstance(node, ast.Call):
            name = ctx.qualname(node.func) or ""
            if isinstance(node.func, ast.Attribute) and not name.startswith("torch."):
                continue  # a method: its name is checked above
            if isinstance(node.func, ast.Name) and node.func.id in GENERATED_PREDICATES:
                continue  # GraphMend's own: reads dtypes and shapes, raises on none
            if not (name.startswith("torch.") and name.rsplit(".", 1)[1] in _SHAPE_SAFE_CALLS):
                return None
            continue
        if isinstance(node, ast.Attribute) and node.attr == "dtype":
            continue
        return None
    return tensors


def _one_element_names(ctx: FixContext, tests: list[ast.expr]) -> frozenset[str]:
    """Names the tests read as one value on every path: converted to a Python number (`t.item()`,
    `float(t)`, `int(t)`, `bool(t)`) or compared with numbers in the test whose truth `if` asks
    (`if t > 0:`). Where the original went on, `t` has exactly one element, so it broadcasts with
    any shape and cannot make a branch's arithmetic raise (`if temperature.item() > 0:
    logits = logits / temperature`); a shape it changes is still caught by the type check, and a
    condition of unknown size is checked first (`_graphmend_one_value`), before any such value is
    computed."""
    names = set()
    for test in tests:
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.Compare):  # `if t > 0:` asks the truth of one value: `t` has one element
            operands = [test.left, *test.comparators]
            named = [o for o in operands if isinstance(o, ast.Name)]
            if len(named) == 1 and all(o is named[0] or _number_literal_node(o) for o in operands):
                names.add(named[0].id)
        for node in walk(test):
            if not isinstance(node, ast.Call) or node.keywords:
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
                operand: ast.expr = node.func.value
            elif ctx.qualname(node.func) in ("builtins.float", "builtins.int", "builtins.bool") and len(node.args) == 1:
                operand = node.args[0]
            else:
                continue
            if isinstance(operand, ast.Name):
                names.add(operand.id)
    return frozenset(names)


def _number_literal_node(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _check_computable_ahead(
    ctx: FixContext, signatures: Signatures, values: list[ast.expr], unproven: DeclineError, tests: list[ast.expr]
) -> dict[int, tuple[str, ...]]:
    """Values whose dtypes are only compared while tracing are computed before the comparison, on
    every path: none may need torch.cond (`unproven` stands) or raise on shapes where the original
    did not compute it (`tests`, computed on every path, add no new error). A value that could
    raise only because it combines tensors of unknown shapes is computed only where a check made
    while tracing finds them alike: the names to check, by the value's `id` (see `_guarded`)."""
    evaluated = frozenset(ctx.code(n) for test in tests for n in walk(test) if isinstance(n, ast.expr))
    single = _one_element_names(ctx, tests)
    if any(_costly(ctx, v) for v in values):
        raise unproven
    guards: dict[int, tuple[str, ...]] = {}
    for value in values:
        if _cannot_raise_on_shapes(ctx, value, signatures, evaluated, single):
            continue
        operands = _operands_to_match(ctx, value, signatures, evaluated, single)
        if operands is None:
            raise DeclineError(
                "dtype-shape-unproven",
                f"{unproven.reason}; and computing `{_describe(ctx, value)}` on both paths could raise "
                "(its operands' shapes are not known to fit)",
            ) from None
        guards[id(value)] = operands
    return guards


def _guarded(text: str, operands: tuple[str, ...] | None) -> str:
    """`text` computed only where `operands` are floating tensors on one device whose shapes agree
    apart from one-element tensors (settled while tracing; on such tensors the elementwise work
    `_operands_to_match` admits raises on none), else None, which the type check after it
    rejects: the original branches run there."""
    if not operands:
        return text
    return f"({text}) if {call_text(BROADCAST_FREE, *operands)} else None"


def _require_same_type(ctx: FixContext, signatures: Signatures, values: list[ast.expr], role: str) -> None:
    """Declines with `dtype-shape` when the values' dtypes differ for sure, with `dtype-shape-unproven`
    when the analysis cannot tell (the caller may then compare them while tracing instead)."""
    sigs = [signatures.of(v) for v in values]
    first = sigs[0]
    for value, sig in zip(values[1:], sigs[1:]):
        if signatures.known_different(first, sig):
            raise DeclineError(
                "dtype-shape",
                f"{role} have different dtypes (`{_describe(ctx, values[0])}` vs `{_describe(ctx, value)}`); torch.where would promote them",
            )
        if not signatures.equal(first, sig):
            raise DeclineError(
                "dtype-shape-unproven",
                f"cannot prove {role} have the same dtype and shape (`{_describe(ctx, values[0])}` vs "
                f"`{_describe(ctx, value)}`); torch.where would promote or broadcast them",
            )


def _restricted_calls(ctx: FixContext, value: ast.expr) -> list[tuple[ast.expr, str]]:
    """(argument, safe value) for each function in `value` undefined on part of its domain or
    overflowing (RESTRICTED), divisions by a tensor and powers; and the operands of a product of
    two tensors, whose gradient is the other operand: a NaN or infinite element on the path not
    taken would reach the input's gradient as `0 * nan` (0 is safe for both)."""
    found: list[tuple[ast.expr, str]] = []
    for node in walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and ctx.kind(node.right) in TENSOR_KINDS:
            found.append((node.right, "1"))  # integer `//` and `%` by 0 raise on the CPU, `/` gives inf
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and all(ctx.kind(o) in TENSOR_KINDS for o in (node.left, node.right)):
            found += [(node.left, "0"), (node.right, "0")]
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            # `x ** e`: the base as `pow`'s; a tensor exponent (`2 ** t` overflows) masked to 0
            found += [(operand, safe) for operand, safe in ((node.left, "1"), (node.right, "0")) if ctx.kind(operand) in TENSOR_KINDS]
            continue
        if not isinstance(node, ast.Call):
            continue
        name = ctx.qualname(node.func)
        if name is not None:
            leaf = name.rsplit(".", 1)[1]
            if leaf in RESTRICTED and node.args:
                found.append((node.args[0], RESTRICTED[leaf]))
            if leaf in DIVISIONS and len(node.args) > 1 and ctx.kind(node.args[1]) in TENSOR_KINDS:
                found.append((node.args[1], "1"))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in RESTRICTED:
            found.append((node.func.value, RESTRICTED[node.func.attr]))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in DIVISIONS and node.args and ctx.kind(node.args[0]) in TENSOR_KINDS:
            found.append((node.args[0], "1"))  # `x.div(y)`'s divisor
    return found


def _selecting(conditions: list[str], position: int) -> tuple[str, bool]:
    """(a 0-d boolean tensor, whether branch `position` is taken where it is true) for an
    if/elif/else chain (the else branch is `len(conditions)`): a branch is taken where its own
    test holds and no earlier one does; the else where none does."""
    if position == 0:
        return conditions[0], True
    earlier = " | ".join(f"({c})" for c in conditions[:position]) if position > 1 else conditions[0]
    if position == len(conditions):
        return earlier, False
    return f"({conditions[position]}) & ~({earlier})", True


def _mask_restricted(
    ctx: FixContext,
    value: ast.expr,
    torch: str,
    condition: str | None,
    selected: bool,
    renames: dict[str, str] | None = None,
) -> str:
    """`sqrt(a)` on the path selected by `condition` -> `sqrt(where(condition, a, 1))`, so the
    unselected path neither produces NaN nor sends NaN gradients into `a` (the "double where").
    Nested ones (`x / sqrt(x)`) are masked at every level, innermost included. `renames` replaces
    names the branch assigned earlier by the temporaries that hold those values."""
    restricted = _restricted_calls(ctx, value) if condition is not None else []
    renamed = {
        id(n): (renames or {})[n.id]
        for n in walk(value)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in (renames or {})
    }
    if not restricted and not renamed:
        return ctx.argument(value)
    safe_values: dict[int, str] = {id(argument): safe for argument, safe in restricted}

    def masked(argument: ast.expr, safe: str) -> str:
        inner = render(argument)
        return f"{torch}.where({condition}, {inner}, {safe})" if selected else f"{torch}.where({condition}, {safe}, {inner})"

    def render(node: ast.expr) -> str:
        if id(node) in renamed:
            return renamed[id(node)]
        text = ctx.code(node)
        base = ctx.span(node)
        targets = {**safe_values, **renamed}
        for child, _ in sorted(_outermost(node, targets), key=lambda item: char_offset(ctx, base, ctx.span(item[0])), reverse=True):
            span = ctx.span(child)
            start, end = char_offset(ctx, base, span), char_offset(ctx, base, span, end=True)
            replacement = renamed[id(child)] if id(child) in renamed else masked(child, safe_values[id(child)])  # type: ignore[arg-type]
            text = text[:start] + replacement + text[end:]
        return text

    text = render(value)
    return f"({text})" if isinstance(value, (ast.Tuple, ast.GeneratorExp, ast.NamedExpr)) else text


def _outermost(node: ast.AST, targets: dict[int, str]) -> list[tuple[ast.expr, str]]:
    """The nodes of `targets` under `node` that are not under another one of them."""
    found: list[tuple[ast.expr, str]] = []
    for child in child_nodes(node):
        if id(child) in targets:
            found.append((child, targets[id(child)]))  # type: ignore[arg-type]
        else:
            found.extend(_outermost(child, targets))
    return found


class _IfRewrite:
    """One `if` statement (with its elif/else chain) and the statements the rewrite replaces."""

    def __init__(self, finding: Finding, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.If) -> None:
        self.finding = finding
        self.ctx = ctx
        self.function = function
        self.statement = statement
        self.torch = ctx.torch_name()
        self.signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        self.uses_cond = False
        self.fresh_names: set[str] = set()
        # Values whose dtype and shape the analysis cannot prove equal are held in temporaries and
        # compared while tracing (dynamo knows dtypes and shapes: no break); the `where` runs where
        # they match, the original `if` everywhere else.
        self.type_checks: list[str] = []
        self.checked_values: list[str] = []
        # Values computed ahead only where their operands prove alike while tracing (`_guarded`).
        self.ahead_guards: dict[int, tuple[str, ...]] = {}
        self.tensor_test: ast.expr | None = None
        self.unproven: DeclineError | None = None  # the proof that failed, should checking be impossible
        # A condition not known to be one value is held in a temporary and its size checked while
        # tracing (`if` on several values raises; `where` would broadcast them).
        self.condition_name: str | None = None
        self.condition_line = ""
        self.condition_error: DeclineError | None = None

    def build(self) -> Fix:
        ctx = self.ctx
        prefix, tensor_test = self._split_static_prefix(self.statement.test)
        self.tensor_test = tensor_test
        branches = self._branches(tensor_test)
        self.tests = [b.test for b in branches if b.test is not None]
        fallthrough = None
        if self._is_return_form(branches):
            has_else = branches[-1].test is None
            if not has_else:
                between, follower = self._fallthrough()
                if between:
                    if prefix is not None or len(self.tests) > 1:
                        raise DeclineError("code-after-return", "code runs between the early return and the final return, under an elif or a Python-level condition")
                    return self._render(self._early_return_code(branches[0], between, follower), [*between, follower])
                branches.append(_Branch(None, [follower]))
                if prefix is None:
                    fallthrough = follower  # replaced too: the where covers both returns
                # with a Python-level prefix (never with an elif: _split_static_prefix declines those)
                # the final return stays for the path where it is false:
                #   if P: return where(T, A, B)
                #   return B
            code = self._return_code(branches)
        else:
            code = self._assignment_code(branches)
        if self.type_checks:
            code = self._behind_check(" and ".join(dict.fromkeys(self.type_checks)), self.checked_values, code, branches)
        if self.condition_name is not None:
            # outermost: the values checked above are computed only where the condition is one
            # value, as the original computed them only after its test had read one value
            code = self._behind_check(call_text(ONE_VALUE, self.condition_name), [self.condition_line], code, branches)
        if prefix is not None:
            header = " and ".join(ctx.code(p) for p in prefix)
            code = f"if {header}:\n" + textwrap.indent(code, "    ")
            if self.statement.orelse:
                code += "else:\n" + textwrap.indent(self._block_text(self.statement.orelse), "    ")
        return self._render(code, [fallthrough] if fallthrough is not None else [])

    # -- structure ----------------------------------------------------------------------------
    def _split_static_prefix(self, test: ast.expr) -> tuple[list[ast.expr] | None, ast.expr]:
        """`P1 and P2 and T` where the P are Python-level (dynamo knows them): keep them in an if."""
        if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
            return None, test
        values = test.values
        split = 0
        # Keeping leading non-tensor operands in a Python `if` never changes meaning: they are
        # evaluated first and exactly as before (dynamo knows them, or breaks on them as before).
        while split < len(values) and not tensor_logic(self.ctx, values[split], self.signatures):
            split += 1
        if split == 0:
            return None, test
        if split == len(values):
            raise DeclineError("python-condition", "the condition has no tensor part")
        if self.statement.orelse and len(self.statement.orelse) == 1 and isinstance(self.statement.orelse[0], ast.If):
            raise DeclineError("static-prefix-elif", "an elif chain under a Python-level condition is left as is")
        rest = values[split:]
        if len(rest) == 1:
            return values[:split], rest[0]
        return values[:split], ast.BoolOp(op=ast.And(), values=rest)  # synthetic, only read

    def _branches(self, first_test: ast.expr) -> list[_Branch]:
        branches = [_Branch(first_test, self.statement.body)]
        current = self.statement
        while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
            branches.append(_Branch(current.test, current.body))
        if current.orelse:
            branches.append(_Branch(None, current.orelse))
        return branches

    def _is_return_form(self, branches: list[_Branch]) -> bool:
        returns = [len(b.body) == 1 and isinstance(b.body[0], ast.Return) for b in branches]
        if all(returns):
            return True
        if any(returns):
            raise DeclineError("mixed-branches", "some branches return and others do not")
        return False

    def _fallthrough(self) -> tuple[list[ast.stmt], ast.Return]:
        """The statements after the `if` up to the function's final return, and that return."""
        parent = self.ctx.parent(self.statement)
        block = next(
            (getattr(parent, f) for f in ("body", "orelse", "finalbody") if any(s is self.statement for s in getattr(parent, f, []) or [])),
            None,
        )
        block = block or []
        index = next((i for i, s in enumerate(block) if s is self.statement), len(block))
        following = block[index + 1 :]
        end = next((i for i, s in enumerate(following) if isinstance(s, ast.Return)), None)
        if end is None:
            raise DeclineError("no-fallthrough", "no return follows the early return in the same block")
        final = following[end]
        if final.value is None:  # type: ignore[attr-defined]
            raise DeclineError("bare-return", "a branch returns None")
        return following[:end], final  # type: ignore[return-value]

    def _early_return_code(self, branch: _Branch, between: list[ast.stmt], final: ast.Return) -> str:
        """`if c: return A` / `S` / `return B` -> the condition first, S computed on both paths
        (pure; masked where undefined on the early-return path), then `return where(c, A, B)`."""
        ctx, torch = self.ctx, self.torch
        early = branch.body[0].value  # type: ignore[attr-defined]
        late = final.value
        if early is None or late is None:
            raise DeclineError("bare-return", "a branch returns None")
        if isinstance(early, ast.Tuple) or isinstance(late, ast.Tuple):
            raise DeclineError("code-after-return", "code runs between an early return of a tuple and the final return")
        rebound: set[str] = set()
        for stmt in between:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                raise DeclineError("code-after-return", f"the code between the early return and the final return does more than assign names (`{excerpt(ctx.code(stmt).splitlines()[0], 40)}`)")
            check_pure(ctx, stmt.value, f"`{stmt.targets[0].id} = ...` (now computed when returning early too)")
            rebound.add(stmt.targets[0].id)
        for value, role in ((early, "the early return's value"), (late, "the final return's value")):
            _require_tensor(ctx, value, role)
            check_pure(ctx, value, f"{role} (computed on every path)")
        checked = self._early_return_checked(early, late, between)
        _check_not_a_nan_guard(ctx, self.tests, [early, late], "the returned values")
        condition = self._condition(self.tests[0], early_return=True)
        flag = self._fresh("returns_early")
        lines = [f"{flag} = {condition}"]
        early_text = _mask_restricted(ctx, early, torch, flag, True)
        names_read = {n.id for n in walk(early) if isinstance(n, ast.Name)}
        if (rebound & names_read) or (checked and not isinstance(early, ast.Name)):
            held = self._fresh("early_value")  # its names change below (or it is compared): take the value now
            lines.append(f"{held} = {early_text}")
            early_text = held
        for stmt in between:
            lines.append(f"{stmt.targets[0].id} = {_mask_restricted(ctx, stmt.value, torch, flag, False)}")  # type: ignore[attr-defined]
        late_text = _mask_restricted(ctx, late, torch, flag, False)
        if not checked:
            lines.append(f"return {where_call(torch, flag, early_text, late_text)}")
            return "\n".join(lines) + "\n"
        # Both values are at hand: where dynamo knows while tracing that they have one dtype and
        # shape, select; elsewhere return the one the original returned, as it did.
        if not isinstance(late, ast.Name) or late_text != late.id:
            held_late = self._fresh("late_value")
            lines.append(f"{held_late} = {late_text}")
            late_text = held_late
        check = call_text(SAME_TYPE, *dict.fromkeys([early_text, late_text]))
        self.type_checks.append(check)
        lines += [
            f"if {check}:",
            f"    return {where_call(torch, flag, early_text, late_text)}",
            f"elif {flag}:",
            f"    return {early_text}",
            f"return {late_text}",
        ]
        return "\n".join(lines) + "\n"

    def _early_return_checked(self, early: ast.expr, late: ast.expr, between: list[ast.stmt]) -> bool:
        """False when the returned values are proven to have one dtype and shape; True when that is
        left to a check made while tracing (every value computed ahead cannot raise on shapes)."""
        ctx = self.ctx
        try:
            _require_same_type(ctx, self.signatures, [early, late], "the returned values")
            return False
        except DeclineError as error:
            if error.key != "dtype-shape-unproven":
                raise
            computed = [early, late, *(stmt.value for stmt in between if isinstance(stmt, ast.Assign))]
            if _check_computable_ahead(ctx, self.signatures, computed, error, self.tests):
                raise error  # where the check fails the values held here are returned: none may be left out
            return True

    # -- returns ------------------------------------------------------------------------------
    def _return_code(self, branches: list[_Branch]) -> str:
        values = [b.body[0].value for b in branches]  # type: ignore[attr-defined]
        if any(v is None for v in values):
            raise DeclineError("bare-return", "a branch returns None")
        if all(isinstance(v, ast.Tuple) for v in values):
            arity = {len(v.elts) for v in values}  # type: ignore[union-attr]
            if len(arity) != 1:
                raise DeclineError("tuple-arity", "the branches return tuples of different lengths")
            columns = list(zip(*(v.elts for v in values)))  # type: ignore[union-attr]
            parts = [self._select(list(column), f"element {i + 1} of the returned tuple") for i, column in enumerate(columns)]
            return "return " + ", ".join(parts) + "\n"
        if any(isinstance(v, ast.Tuple) for v in values):
            raise DeclineError("tuple-arity", "some branches return tuples and others do not")
        return f"return {self._select(values, 'the returned values')}\n"

    # -- assignments --------------------------------------------------------------------------
    def _assignment_code(self, branches: list[_Branch]) -> str:
        ctx = self.ctx
        if branches[-1].test is not None:
            branches.append(_Branch(None, []))  # no else: the values before the if
        order: list[str] = []  # names in order of first assignment
        lines: list[str] = []  # values computed on every path before the selection
        for position, branch in enumerate(branches):
            statements = [_plain_assignment(s) for s in branch.body if not isinstance(s, ast.Pass)]
            for index, stmt in enumerate(statements):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                    raise DeclineError("statement", f"a branch does more than assign a name (`{excerpt(ctx.code(stmt).splitlines()[0], 40)}`)")
                name = stmt.targets[0].id
                later = statements[index + 1 :]
                if _assigns(later, name) or _reads(later, name):
                    # The branch goes on from this value (it reads or overwrites `name`): keep the
                    # value in a temporary, computed on every path, and read it from there.
                    temporary = name if self._private_to(branches, position, name) else self._fresh(name)
                    lines.append(f"{temporary} = {self._render_value(branches, position, stmt.value, f'`{name} = ...` (now computed on both paths)')}")
                    branch.renames = {**branch.renames, name: temporary}
                    branch.values[name] = stmt.value
                    branch.texts[name] = temporary
                else:
                    branch.values[name] = stmt.value
                    branch.value_renames[name] = dict(branch.renames)
                    branch.texts.pop(name, None)  # an earlier value held in a temporary is overwritten
                if name not in order:
                    order.append(name)
        # A name assigned in one branch and read nowhere after the `if` is a temporary: compute it
        # on both paths (it is pure). Every other name gets one `where` over the branches.
        merged: list[str] = []
        for name in order:
            owners = [n for n, b in enumerate(branches) if name in b.values]
            if len(owners) == 1 and not read_after(ctx, self.statement, name):
                self._check_hoistable(branches, owners[0], name)
                if name not in branches[owners[0]].texts:  # not already held by a temporary
                    value = self._render_value(branches, owners[0], branches[owners[0]].values[name], f"`{name} = ...` (now computed on both paths)", name)
                    lines.append(f"{name} = {value}")
            else:
                merged.append(name)
        for name in merged:
            change = changed_in_place_after(ctx, self.function, self.statement, name)
            if change is not None:
                raise DeclineError(
                    "in-place",
                    f"`{name}` is changed in place after the `if` (`{excerpt(ctx.code(change).splitlines()[0], 40)}`): "
                    "torch.where makes a new tensor where the original may have kept the old one",
                )
            if any(name not in b.values for b in branches) and not defined_before(ctx, self.statement, name):
                raise DeclineError("undefined-on-a-path", f"`{name}` is assigned on some paths only and is not defined before the `if`")
        if not merged:
            raise DeclineError("nothing-to-select", "the branches assign nothing that is used afterwards")
        selections = [self._select([b.values.get(name) for b in branches], f"the values of `{name}`", name, branches) for name in merged]
        if self.unproven is not None and lines:
            raise self.unproven  # values computed ahead in temporaries: the original `if` could not follow them
        if len(merged) == 1:
            lines.append(f"{merged[0]} = {selections[0]}")
        else:  # evaluate every selection before assigning any (a value may read another target)
            lines.append(f"{', '.join(merged)} = (\n" + "".join(f"    {s},\n" for s in selections) + ")")
        return "\n".join(lines) + "\n"

    def _render_value(self, branches: list[_Branch], position: int, value: ast.expr, role: str, name: str | None = None) -> str:
        """A branch's value computed on every path: pure, with the functions undefined on part of
        their domain masked on the paths that do not select the branch."""
        check_pure(self.ctx, value, role)
        conditions = [self._condition(t) for t in self.tests]
        renames = branches[position].value_renames.get(name, branches[position].renames) if name else branches[position].renames
        return _mask_restricted(self.ctx, value, self.torch, *_selecting(conditions, position), renames)

    def _private_to(self, branches: list[_Branch], position: int, name: str) -> bool:
        """`name` is assigned once, in this branch only, and read nowhere after the `if`: it can
        hold its own value on every path (no temporary name needed)."""
        if sum(1 for s in branches[position].body if _assigns([s], name)) != 1 or read_after(self.ctx, self.statement, name):
            return False
        others = [b for n, b in enumerate(branches) if n != position]
        return not any(_reads(b.body, name) or _assigns(b.body, name) for b in others) and not any(
            isinstance(n, ast.Name) and n.id == name for t in self.tests for n in walk(t)
        )

    def _fresh(self, name: str) -> str:
        taken = {n.id for n in walk(self.function) if isinstance(n, ast.Name)} | self.ctx.index.top_level_names | self.fresh_names
        fresh, number = name, 1
        while fresh in taken:
            fresh, number = f"{name}_{number}", number + 1
        self.fresh_names.add(fresh)
        return fresh

    def _check_hoistable(self, branches: list[_Branch], owner: int, name: str) -> None:
        """A temporary used only in its own branch can be computed unconditionally."""
        for number, other in enumerate(branches):
            if number == owner:
                continue
            if any(isinstance(n, ast.Name) and n.id == name for s in other.body for n in walk(s)):
                raise DeclineError("temporary-clash", f"`{name}` is assigned in one branch and used in another")
            if other.test is not None and any(isinstance(n, ast.Name) and n.id == name for n in walk(other.test)):
                raise DeclineError("temporary-clash", f"`{name}` is assigned in one branch and read by a condition")

    # -- selection ------------------------------------------------------------------------------
    def _select(self, values: list[ast.expr | None], role: str, default_name: str | None = None, branches: list[_Branch] | None = None) -> str:
        """`where(c1, v1, where(c2, v2, v_else))` for the branches' values of one result."""
        ctx = self.ctx
        concrete = [v for v in values if v is not None]
        for value in concrete:
            _require_tensor(ctx, value, role)
            check_pure(ctx, value, f"{role} (computed on every path)")
        for test in self.tests[1:]:
            check_condition_pure(ctx, test, "an elif condition (evaluated on every path)")
        signature_values = list(concrete)
        if default_name is not None and len(concrete) < len(values):
            signature_values.append(ast.Name(id=default_name, ctx=ast.Load()))
        unproven: DeclineError | None = None
        try:
            _require_same_type(ctx, self.signatures, signature_values, role)
        except DeclineError as error:
            if error.key != "dtype-shape-unproven":
                raise
            carried = branches is not None and default_name is not None and any(
                default_name in b.texts or b.value_renames.get(default_name) or b.renames for b in branches
            )
            if carried:
                raise  # temporaries carried across statements: not checked while tracing
            self.ahead_guards.update(_check_computable_ahead(ctx, self.signatures, concrete, error, self.tests))
            unproven = error
        _check_not_a_nan_guard(ctx, self.tests, signature_values, role)
        conditions = [self._condition(t) for t in self.tests]
        if unproven is not None:
            self.unproven = self.unproven or unproven
            return self._checked_select(values, conditions, default_name)
        return self._select_proven(values, conditions, default_name, branches)

    def _checked_select(self, values: list[ast.expr | None], conditions: list[str], default_name: str | None) -> str:
        """The `where` over temporaries holding the branches' values, with the comparison of their
        dtypes, shapes and devices added to `type_checks` (see `_checked`)."""
        ctx, torch = self.ctx, self.torch
        names: list[str] = []
        for position, value in enumerate(values):
            if value is None:
                if default_name is None:
                    raise DeclineError("dtype-shape", "a branch has no value to compare")
                names.append(default_name)
                continue
            text = _mask_restricted(ctx, value, torch, *_selecting(conditions, position))
            if isinstance(value, ast.Name) and text == value.id:
                names.append(text)  # already a name: nothing to hold
                continue
            text = _guarded(text, self.ahead_guards.get(id(value)))
            temporary = self._fresh(f"{default_name or 'value'}_{'if_true' if position == 0 else f'branch_{position + 1}' if position < len(conditions) else 'otherwise'}")
            self.checked_values.append(f"{temporary} = {text}")
            names.append(temporary)
        self.type_checks.append(call_text(SAME_TYPE, *dict.fromkeys(names)))
        result = names[-1]
        for condition, name in reversed(list(zip(conditions, names[:-1]))):
            result = where_call(torch, condition, name, result)
        return result

    def _behind_check(self, check: str, held: list[str], code: str, branches: list[_Branch]) -> str:
        """`code` where a check dynamo settles while tracing holds, the original branches elsewhere:

            x_if_true = x * 0.5                    # `held`: what the check reads
            if _graphmend_same_type(x_if_true, x):
                x = torch.where(c, x_if_true, x)   # `code`
            elif c:                                # the original, as it was
                x = x * 0.5
        """
        lines = "".join(f"{line}\n" for line in held)
        return f"{lines}if {check}:\n" + textwrap.indent(code, "    ") + self._original_branches(branches)

    def _original_branches(self, branches: list[_Branch]) -> str:
        """The original branches as `elif`/`else` clauses (the tensor part of the first test)."""
        parts = []
        for number, branch in enumerate(branches):
            body = [s for s in branch.body if not isinstance(s, ast.Pass)]
            if branch.test is None:
                if body:
                    parts.append("else:\n" + textwrap.indent(self._block_text(body), "    "))
                continue
            test = branch.test if number else self.tensor_test
            assert test is not None
            parts.append(f"elif {self._test_text(test)}:\n" + textwrap.indent(self._block_text(branch.body), "    "))
        return "".join(parts)

    def _condition(self, test: ast.expr, early_return: bool = False) -> str:
        """The condition as a 0-d boolean tensor; when the first test is a tensor not known to be one
        value, the temporary holding it (reshaped to 0-d; its size is checked while tracing)."""
        if self.condition_name is not None and test is self.tests[0]:
            return f"{self.condition_name}.reshape(())"
        try:
            return condition_text(self.ctx, test, self.torch, self.signatures)
        except DeclineError as error:
            ctx = self.ctx
            single_test = len(self.tests) == 1 and test is self.tests[0] and not early_return
            if error.key == "chained-not-scalar" and single_test and isinstance(test, ast.Compare):
                # `lo <= t <= hi` with `t` of unknown shape: the joined links, checked like a tensor test
                self.condition_error = error
                self.condition_name = self._fresh("condition")
                self.condition_line = f"{self.condition_name} = {chained_comparison_text(ctx, test, self.torch, self.signatures, any_shape=True)}"
                return f"{self.condition_name}.reshape(())"
            # `t.item() > 0` with `t` of unknown shape: its tensor form `t > 0`, checked like a tensor test
            compared = number_comparison_text(ctx, test, self.signatures, any_shape=True) if ctx.kind(test) not in TENSOR_KINDS else None
            if error.key != "condition-not-scalar" or not single_test or (ctx.kind(test) not in TENSOR_KINDS and compared is None):
                raise
            self.condition_error = error
            signature = self.signatures.of(test)
            boolean = compared is not None or ctx.kind(test) in BOOL_KINDS or signature.dtype == ("const", "bool")
            self.condition_name = self._fresh("condition")
            text = compared if compared is not None else ctx.argument(test) if boolean else f"{ctx.atom(test)} != 0"
            self.condition_line = f"{self.condition_name} = {text}"
            return f"{self.condition_name}.reshape(())"

    def _test_text(self, test: ast.expr) -> str:
        """A test's source; the tensor part split from a Python prefix is rebuilt from its operands."""
        if hasattr(test, "lineno"):
            return self.ctx.code(test)
        assert isinstance(test, ast.BoolOp)
        return " and ".join(f"({self.ctx.code(v)})" for v in test.values)

    def _select_proven(self, values: list[ast.expr | None], conditions: list[str], default_name: str | None, branches: list[_Branch] | None) -> str:
        ctx = self.ctx
        concrete = [v for v in values if v is not None]

        def held(position: int) -> str | None:
            """The temporary already holding this branch's value, if any."""
            return branches[position].texts.get(default_name) if branches is not None and default_name else None

        def renames(position: int) -> dict[str, str]:
            if branches is None or default_name is None:
                return {}
            return branches[position].value_renames.get(default_name, {})

        if any(_costly(ctx, v) for v in concrete):
            # Both sides of a where always run; a branch with a layer or a matmul is worth torch.cond,
            # which runs only the chosen one (same preconditions; a value returned unchanged is cloned,
            # as cond outputs must not alias its inputs).
            self.uses_cond = True
            texts = []
            for position, value in enumerate(values):
                name = held(position) or (default_name if value is None else None)
                if name is not None:
                    texts.append(f"{name}.clone()")
                elif isinstance(value, ast.Name) and value.id not in renames(position):
                    texts.append(f"{ctx.atom(value)}.clone()")
                else:
                    texts.append(_mask_restricted(ctx, value, self.torch, None, True, renames(position)))  # type: ignore[arg-type]
            result = texts[-1]
            for condition, text in reversed(list(zip(conditions, texts[:-1]))):
                result = cond_call(self.torch, condition, text, result)
            return result
        texts = []
        for position, value in enumerate(values):
            if held(position) is not None:
                texts.append(held(position))  # type: ignore[arg-type]
            elif value is None:
                texts.append(default_name or "None")
            else:
                texts.append(_mask_restricted(ctx, value, self.torch, *_selecting(conditions, position), renames(position)))
        result = texts[-1]
        for condition, text in reversed(list(zip(conditions, texts[:-1]))):
            result = where_call(self.torch, condition, text, result)
        return result

    # -- output -------------------------------------------------------------------------------
    def _block_text(self, body: list[ast.stmt]) -> str:
        lines = self.ctx.source.lines
        first, last = body[0].lineno, body[-1].end_lineno or body[-1].lineno
        return textwrap.dedent("\n".join(lines[first - 1 : last])) + "\n"

    def _render(self, code: str, removed: list[ast.stmt]) -> Fix:
        """Replace the `if` by `code`, and remove the statements after it that `code` covers."""
        ctx = self.ctx
        _check_parses(code)
        target = ctx.cst_node(self.function, self.statement, cst.If)
        new_statements = [flush_blank_lines(stmt) for stmt in cst.parse_module(code).body]
        comments = _comments(target)
        replacements: dict = {}
        for statement in removed:
            follower = ctx.cst_node(self.function, statement, cst.SimpleStatementLine)
            comments += [line for line in follower.leading_lines if line.comment is not None] + _comments(follower)
            replacements[follower] = cst.RemovalSentinel.REMOVE
        first = new_statements[0]
        new_statements[0] = first.with_changes(leading_lines=list(target.leading_lines) + comments)
        replacements[target] = cst.FlattenSentinel(new_statements)
        edits = [ctx.rewrite(self.function, replacements)]
        title = COND_TITLE if self.uses_cond else WhereFixer.title
        if self.type_checks:
            edits += helper_edits(ctx, SAME_TYPE)
            title = CHECKED_TITLE
        if any(self.ahead_guards.values()):
            edits += helper_edits(ctx, BROADCAST_FREE)
        if self.condition_name is not None:
            edits += helper_edits(ctx, ONE_VALUE)
            title = BOTH_CHECKED_TITLE if self.type_checks else ONE_VALUE_TITLE
        return _with_import(ctx, self.finding, edits, title)


def _check_parses(code: str) -> None:
    try:
        ast.parse(code)
    except SyntaxError as exc:  # a bug in the fixer: never write code that does not parse
        raise DeclineError("generated-code", f"the generated code does not parse ({exc.msg})") from exc


def _comments(node: cst.CSTNode) -> list[cst.EmptyLine]:
    """Every comment inside `node` (own-line and end-of-line), as lines to keep above the rewrite."""
    found: list[cst.EmptyLine] = []

    class Collector(cst.CSTVisitor):
        def visit_EmptyLine(self, line: cst.EmptyLine) -> None:
            if line.comment is not None:
                found.append(cst.EmptyLine(comment=line.comment))

        def visit_TrailingWhitespace(self, whitespace: cst.TrailingWhitespace) -> None:
            if whitespace.comment is not None:
                found.append(cst.EmptyLine(comment=whitespace.comment))

    node.visit(Collector())
    # leading_lines of the statement itself are kept separately
    own = {id(line.comment) for line in getattr(node, "leading_lines", ()) if line.comment is not None}
    return [line for line in found if line.comment is not None and id(line.comment) not in own and not re.match(r"#\s*graphmend:", line.comment.value)]
