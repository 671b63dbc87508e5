"""GM101: `if mask.any(): x[mask] = value` -> `x = x.masked_fill(mask, value)`, every time.

Code often tests whether a boolean mask selects anything before writing a number through it:

    bad = torch.isnan(y)
    if bad.any():
        y[bad] = 0.0

The test is a graph break (dynamo does not know the mask's values) and only a shortcut: writing
through a mask that selects nothing changes nothing. So the write can run every time, and the
test goes. It runs out of place, `y = y.masked_fill(bad, 0.0)`: run in place on every input, it
would bump the tensor's version counter even when nothing is written, and autograd raises for a
tensor saved for backward that was changed in place. Rebinding instead of writing in place is
exact only when no other name, view or caller can see the tensor (`aliasing.py`), and
`masked_fill` puts the number where `x[mask] = value` does only when the mask has the tensor's
shape (a mask over leading dimensions selects rows; `masked_fill` would broadcast it from the
trailing ones): where that is not proven, `_graphmend_mask_selects_alike` decides while tracing
and the original `if` runs elsewhere. The number is cast to the tensor's dtype by both.

Accepted tests (the mask known to be boolean): `m.any()`, `torch.any(m)`, `m.sum() > 0` (and
`!= 0`, `>= 1`, or the sum alone), `m.count_nonzero() > 0`, joined by `and` with Python-level
tests that stay in the `if`. The body: only `x[m] = number` and `x.masked_fill_(m, number)` with
that same mask.

Any other test of one tensor value `c` (mmdetection's low-quality matching: `if
gt_max_overlaps[i] >= self.min_pos_iou:` then `assigned_gt_inds[max_iou_inds] = i + 1`) guards the
fill the same way once it is part of the mask: `x = x.masked_fill(m & c, number)` writes the
number where the original wrote it when `c` holds, and nowhere when it does not. The test's value
is held once before the fills, as the `if` took it. The body may first compute the mask into names
(`hot = x > 0.5`): they now run on every path, before the test, so each must be an expression that
cannot raise (comparisons and `+ - * & | ^` of names and numbers reading at most one tensor), read
neither by the test nor after the `if` (upstream's `overlaps[i, :] == gt_max_overlaps[i]` indexes,
and declines).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, NON_TENSOR_KINDS, Kind
from ...astwalk import walk
from ...findings import Edit, Finding
from ...quoting import excerpt
from ..aliasing import local_aliasing_reason
from ..compile_checks import MASK_SELECTS_ALIKE, ONE_VALUE, call_text, helper_edits
from ..context import FixContext
from ..flow import changed_in_place_after, read_after
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..signatures import Signatures, floating_names
from .conditions import check_condition_pure, condition_text, tensor_logic
from .generated import fresh_name

_POSITIVE = {ast.Gt: 0, ast.NotEq: 0, ast.GtE: 1}  # `count > 0`, `count != 0`, `count >= 1`


@dataclass(frozen=True)
class _Fill:
    target: str
    value: ast.expr
    statement: ast.stmt
    receiver: ast.AST


class GuardedMaskedFillFixer:
    narrow = True  # one shape of GM101: its "not my pattern" says least
    codes = frozenset({"GM101"})
    safety = Safety.SAFE
    title = "Fill through the mask every time with masked_fill instead of testing whether it selects anything (filling nothing changes nothing)"
    guarded_title = "Fill with masked_fill through the mask and the tested value together (`m & c`) instead of branching on the tensor"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        tested = ctx.if_testing(finding)
        if tested is None:
            raise DeclineError("not-a-guarded-fill", "the tensor is not tested by an `if`")
        statement, function = tested
        # once per test: each of its findings asks (2,000 operands: 2,000 findings)
        prefix, mask_test, mask = ctx.remember_or_decline(("guarded-fill-split", id(statement.test)), lambda: _split(ctx, statement.test))
        if statement.orelse and mask is None:  # a test of one value with an else: another fixer's pattern
            raise DeclineError("not-a-guarded-fill", "the `if` has an else branch")
        if statement.orelse:
            if mask is None or not _reads_mask(statement.body, mask):  # `if isnan(a).any(): e = token else: e = fc(a)`: a selection
                raise DeclineError("not-a-guarded-fill", "the `if` has an else branch and its body does not use the mask")
            raise DeclineError("guarded-fill-else", "the `if` has an else branch: skipping the test would drop it")
        cloned = _leading_clones(ctx, statement.body)
        computed: list[ast.Assign] = []
        guard, one_value = None, None
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        joined = mask is None  # a test of one tensor value: it joins the mask the body writes through
        fills_from = len(cloned) + (_assignments_first(statement.body[len(cloned) : -1]) if joined else 0)
        if mask is None:
            mask = _written_mask(ctx, statement.body[fills_from:])
        fills = [_fill(ctx, stmt, mask) for stmt in statement.body[fills_from:]]  # not this pattern at all: said first
        if joined:
            computed = _mask_computations(ctx, statement, statement.body[len(cloned) : fills_from], [*prefix, mask_test])
            check_condition_pure(ctx, mask_test, "the condition (now part of the mask)")
            guard, one_value = _guard(ctx, signatures, mask_test)
        if any(name not in {f.target for f in fills} for name in cloned):
            raise DeclineError("not-a-guarded-fill", "the branch copies a tensor it does not fill")
        check_pure(ctx, mask, "the mask (now used every time)")
        for fill in fills:
            # a copy made in the branch is what the original wrote to: nobody else sees it
            reason = None if fill.target in cloned else local_aliasing_reason(ctx, function, fill.target, fill.statement, fill.receiver)
            if reason is not None:
                raise DeclineError("guarded-fill-alias", f"filling out of place would change what other references see: {reason}")
            if changed_in_place_after(ctx, function, statement, fill.target, rewritten=statement) is not None:
                raise DeclineError("guarded-fill-alias", f"`{fill.target}` is changed in place after the `if`")
        targets = list(dict.fromkeys(f.target for f in fills))
        proven = one_value is None and ctx.kind(mask) in BOOL_KINDS and all(
            signatures.equal_shapes(signatures.of(mask), signatures.of(ast.Name(id=t, ctx=ast.Load()))) for t in targets
        )
        written, taken = ctx.code(mask), []
        if guard is not None:  # the test's value, taken once before the fills as the `if` took it
            held = fresh_name(function, "_graphmend_tested")
            taken = [f"{held} = {guard}"]
            written = f"{ctx.atom(mask)} & {held}"
        fill_lines = taken + [f"{f.target} = {f.target}.masked_fill({written}, {ctx.code(f.value)})" for f in fills]
        edits: list[Edit] = []
        computing = [line for stmt in computed for line in _lines(ctx, stmt)]
        if proven:
            lines = computing + fill_lines
        else:  # the fill where the check holds, the original branch (mask test only) elsewhere
            check = call_text(MASK_SELECTS_ALIKE, ctx.code(mask), *targets)
            if one_value is not None:
                check = f"{check} and {call_text(ONE_VALUE, one_value)}"
                edits += helper_edits(ctx, ONE_VALUE)
            original = [line for stmt in statement.body if stmt not in computed for line in _lines(ctx, stmt)]
            lines = [*computing, f"if {check}:", *_indented(fill_lines), f"elif {ctx.code(mask_test)}:", *_indented(original)]
            edits += helper_edits(ctx, MASK_SELECTS_ALIKE)
        if prefix:  # the Python-level tests stay, in their own `if`
            lines = [f"if {' and '.join(ctx.code(p) for p in prefix)}:", *_indented(lines)]
        if_node = ctx.cst_node(function, statement, cst.If)
        new_statements = cst.parse_module("".join(f"{line}\n" for line in lines)).body
        edits.insert(0, ctx.rewrite(function, {if_node: cst.FlattenSentinel(new_statements)}))
        return Fix(finding, self.title if guard is None else self.guarded_title, Safety.SAFE, tuple(edits))


def _leading_clones(ctx: FixContext, body: list[ast.stmt]) -> list[str]:
    """The names the branch first replaces with a copy of themselves (`x = x.clone()`): the
    original writes to the copy, and `masked_fill` makes its own."""
    names: list[str] = []
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            break
        value, name = stmt.value, stmt.targets[0].id
        if not (isinstance(value, ast.Call) and not value.args and not value.keywords and isinstance(value.func, ast.Attribute)):
            break
        if value.func.attr != "clone" or not (isinstance(value.func.value, ast.Name) and value.func.value.id == name):
            break
        names.append(name)
    return names


def _lines(ctx: FixContext, stmt: ast.stmt) -> list[str]:
    """The statement's source lines, indented relative to the statement's own column."""
    first, *rest = ctx.code(stmt).split("\n")
    return [first, *(line[stmt.col_offset :] for line in rest)]


def _indented(lines: list[str]) -> list[str]:
    return [f"    {line}" if line.strip() else line for line in lines]


def _split(ctx: FixContext, test: ast.expr) -> tuple[list[ast.expr], ast.expr, ast.expr | None]:
    """The Python-level operands of an `and` chain, its one any-of-mask operand, and that mask;
    or, where no operand tests a mask, its one tensor operand (the last: the Python tests before it
    stay in the `if` and decide whether it is evaluated, as they did) and None."""
    operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    masks = [(operand, _any_of(ctx, operand)) for operand in operands]
    found: list[tuple[ast.expr, ast.expr | None]] = [(operand, mask) for operand, mask in masks if mask is not None]
    if not found:  # a test of one tensor value, which becomes part of the mask the body writes through
        tensors = [operand for operand in operands if tensor_logic(ctx, operand)]
        if len(tensors) == 1 and tensors[0] is operands[-1]:
            found = [(tensors[0], None)]
    if len(found) != 1:
        raise DeclineError("not-a-guarded-fill", "the condition is not one test of whether a boolean mask selects anything (`mask.any()`)")
    prefix = [operand for operand, _ in masks if operand is not found[0][0]]
    for operand in prefix:
        if tensor_logic(ctx, operand):
            raise DeclineError("not-a-guarded-fill", f"`{ctx.excerpt(operand, 40)}` is also a tensor test; only a mask test can be dropped")
        check_condition_pure(ctx, operand, "a condition kept in the `if` (now evaluated whatever the mask)")
    return prefix, found[0][0], found[0][1]


def _any_of(ctx: FixContext, node: ast.expr) -> ast.expr | None:
    """`m` when `node` is true exactly when the boolean tensor `m` has a True element."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, right = node.ops[0], node.comparators[0]
        threshold = _POSITIVE.get(type(op))
        if threshold is not None and isinstance(right, ast.Constant) and right.value == threshold and type(right.value) is int:
            return _counted(ctx, node.left)
        return None
    return _reduced(ctx, node, ("any",)) or _counted(ctx, node)


def _counted(ctx: FixContext, node: ast.expr) -> ast.expr | None:
    """`m` for `m.sum()`, `torch.sum(m)`, `m.count_nonzero()`: the number of True elements."""
    return _reduced(ctx, node, ("sum", "count_nonzero"))


def _reduced(ctx: FixContext, node: ast.expr, names: tuple[str, ...]) -> ast.expr | None:
    if not (isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Attribute) and node.func.attr in names):
        return None
    if ctx.qualname(node.func) == f"torch.{node.func.attr}" and len(node.args) == 1:
        mask = node.args[0]
    elif not node.args and ctx.qualname(node.func.value) != "torch":
        mask = node.func.value
    else:
        return None
    return mask if ctx.kind(mask) in BOOL_KINDS else None


def _guard(ctx: FixContext, signatures: Signatures, test: ast.expr) -> tuple[str, str | None]:
    """The tested tensor value as a 0-d boolean expression to join the mask with, and, where it is
    not known to be one value, the expression `_graphmend_one_value` must find one element in
    while tracing (elsewhere the original `if` runs, and raises as it did)."""
    try:
        return condition_text(ctx, test, ctx.torch_name(), signatures), None
    except DeclineError as declined:
        if declined.key != "condition-not-scalar" or ctx.kind(test) not in BOOL_KINDS:
            raise
    text = ctx.code(test)
    return f"({text}).reshape(())", text


def _assignments_first(body: list[ast.stmt]) -> int:
    """How many statements open `body` and each assign one plain name."""
    count = 0
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            break
        count += 1
    return count


def _mask_computations(ctx: FixContext, statement: ast.If, body: list[ast.stmt], tests: list[ast.expr]) -> list[ast.Assign]:
    """The `name = <expression>` statements of the branch before its fills (the mask computed into
    a name): they now run on every path, before the test is taken, so each must be unable to raise
    or change anything, and its name may be read neither by the test nor after the `if`."""
    tested = {n.id for test in tests for n in walk(test) if isinstance(n, ast.Name)}
    computed: list[ast.Assign] = []
    for stmt in body:
        assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)  # _assignments_first
        name = stmt.targets[0].id
        check_pure(ctx, stmt.value, f"`{name} = ...` (now computed whatever the condition)")
        if not _cannot_raise(ctx, stmt.value):
            raise DeclineError(
                "guarded-fill-computed-raises",
                f"`{name} = {ctx.excerpt(stmt.value, 30)}`, now computed whatever the condition, could raise where the branch did not run "
                "(only comparisons and + - * & | of names and numbers, with at most one tensor, are computed ahead)",
            )
        if name in tested or read_after(ctx, statement, name):
            raise DeclineError("guarded-fill-computed-read", f"`{name}`, computed in the branch, is read by the test or after the `if`")
        computed.append(stmt)
    return computed


_NEVER_RAISING_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)


def _cannot_raise(ctx: FixContext, value: ast.expr) -> bool:
    """Comparisons and `+ - * & | ^`, `not`, `~`, `-` of names, attributes and numbers, reading at
    most one tensor: nothing that indexes, divides or broadcasts two tensors of unknown shapes."""
    tensors = 0
    for node in walk(value):
        if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(ctx.parent(node), ast.Attribute):
            tensors += ctx.kind(node) not in NON_TENSOR_KINDS
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _NEVER_RAISING_OPERATORS):
                return False
        elif not isinstance(node, (ast.Compare, ast.UnaryOp, ast.Constant, ast.Load, ast.cmpop, ast.unaryop, ast.operator, ast.Attribute)):
            return False
    return tensors <= 1


def _written_mask(ctx: FixContext, fills: list[ast.stmt]) -> ast.expr:
    """The boolean mask the branch's first fill writes through (`x[m] = n`, `x.masked_fill_(m, n)`);
    `_fill` then holds every fill to it."""
    if not fills:
        raise DeclineError("not-a-guarded-fill", "the branch writes nothing through a mask")
    first, mask = fills[0], None
    if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Subscript):
        mask = first.targets[0].slice
    elif isinstance(first, ast.Expr) and isinstance(first.value, ast.Call) and first.value.args:
        mask = first.value.args[0]
    if mask is None or ctx.kind(mask) not in BOOL_KINDS:
        raise DeclineError("not-a-guarded-fill", f"`{excerpt(ctx.code(first).splitlines()[0], 50)}` is not a number written through a boolean mask")
    return mask


def _fill(ctx: FixContext, stmt: ast.stmt, mask: ast.expr) -> _Fill:
    """`x[mask] = number` or `x.masked_fill_(mask, number)`; anything else declines."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0]
        if isinstance(target.value, ast.Name) and ctx.code(target.slice) == ctx.code(mask):
            return _Fill(target.value.id, _number(ctx, stmt.value), stmt, target.value)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if (
            isinstance(func, ast.Attribute) and func.attr == "masked_fill_" and isinstance(func.value, ast.Name)
            and len(call.args) == 2 and not call.keywords and ctx.code(call.args[0]) == ctx.code(mask)
        ):  # fmt: skip
            return _Fill(func.value.id, _number(ctx, call.args[1]), stmt, func.value)
    raise DeclineError(
        "not-a-guarded-fill", f"`{excerpt(ctx.code(stmt).splitlines()[0], 50)}` is not a number written through the tested mask"
    )


def _number(ctx: FixContext, value: ast.expr) -> ast.expr:
    """`value` when it is a Python number (a literal, `-1`, `float("-inf")`, a Python-valued name)."""
    inner = value.operand if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)) else value
    if isinstance(inner, ast.Constant) and type(inner.value) in (int, float, bool):
        return value
    if isinstance(inner, ast.Call) and ctx.qualname(inner.func) == "builtins.float" and len(inner.args) == 1:
        argument = inner.args[0]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return value
    if ctx.kind(value) is Kind.PY and not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return value
    raise DeclineError("not-a-number", f"`{ctx.excerpt(value, 40)}` is not known to be a Python number (a tensor value may broadcast differently)")


def _reads_mask(body: list[ast.stmt], mask: ast.expr) -> bool:
    """Whether the body uses the tested mask (`y[bad] = 0`, `y.masked_fill(bad, 0)`): a fill, then."""
    wanted = ast.dump(mask)
    return any(ast.dump(node) == wanted for statement in body for node in walk(statement) if type(node) is type(mask))

