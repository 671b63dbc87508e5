"""Compute a mask written inline once, before the selection that first uses it, and read it by name.

`correct = correct[target != ignore_index]` or `loss = loss[loss > thresh]`, then reductions of
the name: the masked-reduction rewrite keeps the whole tensor under the name and needs the mask
again at every reduction. Evaluating the comparison again there is wrong wherever a name it reads
has changed in between, and always wrong when the selection re-binds one of them (`loss = loss[loss
> thresh]` would compare the selection). Bound once to a fresh name just before the statement, the
mask is the very tensor the original computed at that point (the statement's other parts are
elementwise work, pure, so evaluating the mask first changes nothing), and every later read sees
that tensor. Other selections in the following statements written with the same mask text read
the name too, up to the first statement that may change what the mask reads.

The hoisting is made only for that fix: the fix is planned on the hoisted text (`variant`), and
declined with the reason found there, the mask's text in place of its new name.

Preconditions: the mask is pure (`purity.check_pure`); the statement starts its own line in a
block (so the new line goes just before it, with its indentation); the mask is written on one line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..analysis.kinds import TENSOR_KINDS
from ..astwalk import child_nodes, walk
from ..findings import Edit, Finding, Span
from ..textedits import apply_edits
from .aliasing import is_fresh
from .context import FixContext
from .flow import changes_in_place, mask_reads_changed, rest_of_block
from .model import DeclineError, Fix
from .purity import check_pure
from .selections import mask_roots, reference_root
from .variant import plan_on_variant

MASK_NAME = "_graphmend_mask"
SELECTED_NAME = "_graphmend_selected"


def plan_with_mask_named(
    finding: Finding, ctx: FixContext, binding: ast.stmt, mask: ast.expr, declined: DeclineError, plan: Callable[[Finding, FixContext], Fix]
) -> Fix:
    """`plan` applied to `finding` in the file with `mask` (a selection's index in `binding`)
    bound to a fresh name on a new line before `binding`; its edits turned into edits of the
    original text. Raises `declined` where the hoisting does not apply or `plan` declines on the
    hoisted text too."""
    function, value = _hoistable(ctx, binding, declined)
    try:
        check_pure(ctx, mask, "the mask (now computed before the statement)")
    except DeclineError:
        raise declined from None
    if not _cannot_change(ctx, value, mask_roots(mask)):
        raise declined  # its other parts now run after the mask: `t.add_(1)[t > 0]` would see another `t`
    if not is_fresh(ctx, mask) and mask_reads_changed(ctx, function, walk(function), binding, mask_roots(mask)) is not None:
        raise declined  # `m.bool()` may be `m` itself: the name would follow later changes to `m`
    reads = _same_mask_reads(ctx, function, binding, mask)
    if not any(read is mask for read in reads):
        # the selection's own mask is not an index written there (`x.masked_select(m > 0)`): the
        # variant would decline the same way, and hoisting again on it would never end
        raise declined
    why = f"the mask `{ctx.excerpt(mask, 30)}` is computed once, before the selection, and read by name"
    return _plan_hoisted(finding, ctx, binding, mask, reads, MASK_NAME, why, declined, plan)


def plan_with_selected_named(
    finding: Finding, ctx: FixContext, binding: ast.stmt, selected: ast.expr, declined: DeclineError, plan: Callable[[Finding, FixContext], Fix]
) -> Fix:
    """`plan` applied to `finding` with `selected` (the tensor a selection in `binding` indexes,
    `probs[:, target].diagonal()` of torchmetrics' perplexity) bound to a fresh name on a new line
    before `binding`: a shape the analysis cannot prove is then checked while tracing, between two
    names. Only where `selected` is the first thing the statement evaluates (`_evaluated_first`):
    bound just before it, it runs at the same point, so whatever it does (raise on an index out
    of range, draw random numbers) happens as it did. Raises `declined` where this does not apply."""
    _, value = _hoistable(ctx, binding, declined)
    if isinstance(selected, ast.Name) or ctx.kind(selected) not in TENSOR_KINDS or not _evaluated_first(value, selected):
        raise declined
    why = f"the selected tensor `{ctx.excerpt(selected, 30)}` is computed once, before the selection, and read by name"
    return _plan_hoisted(finding, ctx, binding, selected, [selected], SELECTED_NAME, why, declined, plan)


def _hoistable(ctx: FixContext, binding: ast.stmt, declined: DeclineError) -> tuple[ast.AST, ast.expr]:
    """The function around `binding` and its value, where a line can go just before it: it starts
    its own line in a block, and has a value (raises `declined` otherwise)."""
    function = ctx.function_of(binding)
    indent = ctx.source.lines[binding.lineno - 1][: binding.col_offset]
    value = binding.value if isinstance(binding, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)) else None
    if function is None or indent.strip() or _shares_a_line(ctx, binding) or value is None:
        raise declined
    return function, value


def _plan_hoisted(
    finding: Finding,
    ctx: FixContext,
    binding: ast.stmt,
    hoisted: ast.expr,
    reads: list[ast.expr],
    base: str,
    why: str,
    declined: DeclineError,
    plan: Callable[[Finding, FixContext], Fix],
) -> Fix:
    """`plan` on the variant with `hoisted` bound to a fresh name (`base`, numbered) on a new line
    before `binding`, and each of `reads` replaced by that name."""
    text = ctx.code(hoisted)
    if "\n" in text:
        raise declined  # replaced by a name, it would move the lines after it
    function = ctx.function_of(binding)
    assert function is not None  # _hoistable
    name = _fresh_name(function, base)
    indent = ctx.source.lines[binding.lineno - 1][: binding.col_offset]
    edits = [Edit(Span(binding.lineno, 0, binding.lineno, 0), f"{indent}{name} = {text}\n")]
    edits += [Edit(ctx.span(node), name) for node in reads]
    moved = finding.span.start_line + (1 if finding.span.start_line >= binding.lineno else 0)
    return plan_on_variant(finding, ctx, apply_edits(ctx.text, edits), moved, declined, plan, why, {name: ctx.excerpt(hoisted, 30)})


def _evaluated_first(value: ast.expr, part: ast.expr) -> bool:
    """Whether Python evaluates `part` before anything else of `value` but names and constants
    (which cannot notice the order): it is `value`, or on the leftmost path down from it (a
    subscript's or attribute's object, a call's callee - or its first argument where the callee is
    a dotted name - a binary operation's or comparison's left side - or its right where the left
    is a name or constant - a unary operation's operand)."""
    node: ast.expr | None = value
    while node is not None and node is not part:
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        elif isinstance(node, ast.Call):
            # the callee first; where it is a plain dotted name (`F.l1_loss`), nothing of it can
            # notice the order, and the first argument is evaluated next
            node = node.args[0] if reference_root(node.func) is not None and node.args and not isinstance(node.args[0], ast.Starred) else node.func
        elif isinstance(node, ast.BinOp):
            node = node.right if isinstance(node.left, (ast.Name, ast.Constant)) else node.left
        elif isinstance(node, ast.Compare):
            node = node.left
        elif isinstance(node, ast.UnaryOp):
            node = node.operand
        else:
            node = None
    return node is part


def _shares_a_line(ctx: FixContext, binding: ast.stmt) -> bool:
    """`a = 1; x = x[m]`, or a statement another ends on: a new line before it would split them."""
    siblings = child_nodes(ctx.parent(binding) or binding)
    return any(isinstance(s, ast.stmt) and s is not binding and (s.end_lineno or s.lineno) == binding.lineno for s in siblings)


def _fresh_name(function: ast.AST, base: str = MASK_NAME) -> str:
    """`base`, numbered where the function already holds that name."""
    taken = {n.id for n in walk(function) if isinstance(n, ast.Name)} | {a.arg for a in walk(function) if isinstance(a, ast.arg)}
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    return name


def _same_mask_reads(ctx: FixContext, function: ast.AST, binding: ast.stmt, mask: ast.expr) -> list[ast.expr]:
    """The indexes written as `mask` in `binding` and in the pure statements right after it, which
    change nothing the mask reads (none where `binding` itself changes one of its names)."""
    shape = ast.dump(mask)
    roots = mask_roots(mask)
    found = [node for node in _mask_indexes(binding) if ast.dump(node) == shape]
    if any(_changes(node, roots) for node in walk(binding)):
        return found
    for statement in rest_of_block(ctx, binding)[1:]:
        if not _pure_binding(ctx, statement, roots):
            break
        found += [node for node in _mask_indexes(statement) if ast.dump(node) == shape]
    return found


def _cannot_change(ctx: FixContext, value: ast.expr, roots: list[str]) -> bool:
    """Evaluating `value` changes none of `roots`: no walrus, lambda or comprehension, no in-place
    change of one, and calls only of torch's functions and methods of tensors that do not write in
    place (a helper, a method of the module or of a config object could change what the mask reads)."""
    for node in walk(value):
        if isinstance(node, (ast.NamedExpr, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return False
        if any(changes_in_place(node, root) for root in roots):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            name = ctx.qualname(func) or ""
            method = isinstance(func, ast.Attribute) and not name and ctx.kind(func.value) in TENSOR_KINDS
            if not (name.startswith("torch.") or method) or name.endswith("_") or (method and func.attr.endswith("_")):  # type: ignore[attr-defined]
                return False
    return True


def _pure_binding(ctx: FixContext, statement: ast.stmt, roots: list[str]) -> bool:
    """`name = <value>`, `return <value>` or an expression statement, binding none of `roots`,
    whose value changes none of them (`_cannot_change`)."""
    if isinstance(statement, ast.Assign):
        if not all(isinstance(t, ast.Name) and t.id not in roots for t in statement.targets):
            return False
    elif not isinstance(statement, (ast.Return, ast.Expr)):
        return False
    return statement.value is None or _cannot_change(ctx, statement.value, roots)


def _mask_indexes(statement: ast.stmt) -> list[ast.expr]:
    """The parts of subscripts' indexes in `statement` (`m` of `x[m]` and of `x[:, m]`)."""
    indexes: list[ast.expr] = []
    for node in walk(statement):
        if isinstance(node, ast.Subscript):
            indexes += node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return indexes


def _changes(node: ast.AST, roots: list[str]) -> bool:
    """A store of one of `roots` (the statement's own target included) or an in-place change of one."""
    if isinstance(node, ast.Name) and node.id in roots and isinstance(node.ctx, (ast.Store, ast.Del)):
        return True
    return any(changes_in_place(node, root) for root in roots)
