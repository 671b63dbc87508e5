"""GM402/GM403: a reduction over boolean-mask-selected elements -> a fixed-shape `torch.where` reduction.

`y[m].sum()` has a data-dependent shape in the middle; `torch.where(m, y, 0).sum()` does not, and
gives the same value because the masked-out elements contribute the identity of the reduction
(taxonomy P24a) - up to floating-point rounding: a vectorised sum over the longer tensor adds the
selected values in another order (on 1,000 random floats, 163 of 200 sums differed in the last
bits), so the title says so; integer and boolean sums are exact.

The same holds for elementwise work on selections by one mask, the usual shape of a masked loss or
accuracy: `(pred[m] - gt[m]).abs().mean()`, `(a.masked_select(m) == b.masked_select(m)).sum()`,
`F.l1_loss(pred[m], gt[m])`. The elementwise work runs on every element and `where` keeps the
selected results. Where that work is not linear (`abs`, a product of tensors, a loss), each input
is first zeroed outside the mask (`pred.masked_fill(~m, 0)`): a NaN or inf in an unselected element
(often the reason for the mask) would otherwise reach the gradient as `0 * nan`. Only operations
that are finite at 0 with a finite derivative there are accepted, so the zeroed elements cost
nothing in value or gradient; where the work takes a `log`, `sqrt`, `rsqrt` or `reciprocal` or
divides by a selection (a depth loss's `log(pred) - log(gt)`, a relative error `|p - g| / g`),
the fill is 1 instead, finite with a finite derivative under all of these and the others.
Names bound to such work (`pred = pred[m]; gt = gt[m]; err = pred - gt`) form a chain in one
block: each becomes the work on the whole tensors, and every reduction of them keeps the selected
results, provided no name of the chain is read after its block or assigned again. A block ending
in `return` is followed by nothing; where the names are read after an `if` at the end of the
function (`if mask is not None: pred = pred[mask]`), that code is repeated inside the `if` first
(rewrite/tail_copy.py).

Preconditions: a full reduction (no dim) of `sum`, `prod`, `mean` or `nansum`; a `sum`, `nansum`
or `mean` over dimension 0 of a selection by a mask that stands first (`x[keep].mean(0)`, the
centroid of the selected rows: the mask's dimensions of the whole tensor are reshaped into one and
reduced, a mean divided by the count of the mask); a full `var` or `std` with a correction of 0
or 1 (two masked passes: the mean of the selection, then the squared deviations from it, divided
by the count less the correction, at least 0: NaN for too few elements, as the original; torch's
degrees-of-freedom warning is not repeated, as under inductor and aot_eager, which do not emit it
for the original either), or a loss with reduction `mean`/`sum`; one mask for every selection,
alone or among full slices (`x[:, m]`,
`x[m, :]`, `x[..., m]`). Where the mask is not proven to have each tensor's shape,
`_graphmend_mask_spans` (settled while tracing) chooses between the rewrite and the original
expression, and the rewrite spreads the mask over the dimensions it does not cover
(`_graphmend_spread_mask`): a mask over leading dimensions selects rows, which `where` would
otherwise align with the trailing dimensions. `mean` becomes sum / count, which is NaN
for an empty selection exactly like the original. `max`/`min` are declined: on an empty selection
the original raises, and a `-inf` identity would return a value instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, TENSOR_KINDS
from ...astwalk import walk
from ...findings import Edit, Finding
from ..compile_checks import FLOATING, MASK_SPANS, SPREAD_MASK, STD_OF, call_text, checked_or_original, helper_edits
from ..context import FixContext
from ..flow import mask_reads_changed, rest_of_block
from ..mask_hoist import plan_with_mask_named, plan_with_selected_named
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..py_types import Function
from ..selections import MaskIndex, Selection, mask_index, mask_roots, number_literal, reference_root, rereadable, selection_of
from ..signatures import DTYPE_NAMES, Signatures, floating_names
from ..tail_copy import plan_with_tail_copied

_IDENTITY = {"sum": "0", "nansum": "0", "prod": "1"}
_REDUCTIONS = frozenset({*_IDENTITY, "mean"})
_SPREADS = frozenset({"var", "std"})  # two passes: the mean of the selection, then the squared deviations
_CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool"})
# Elementwise methods/functions of one tensor, all finite at 0 with a finite derivative there.
_LINEAR_UNARY = frozenset({"neg", "negative"})
_NONLINEAR_UNARY = frozenset({"abs", "square", "absolute"})
# Elementwise functions of one tensor that are finite, with a finite derivative, at 1 (not at 0):
# unselected elements are filled with 1 where these appear.
_POSITIVE_UNARY = frozenset({"log", "log2", "log10", "sqrt", "rsqrt", "reciprocal"})
_BOOL_UNARY = frozenset({"logical_not", "isnan", "isfinite", "isinf", "isposinf", "isneginf", "signbit"})
_BINARY = {  # method/function name -> the operator it is
    "add": ast.Add, "sub": ast.Sub, "subtract": ast.Sub, "mul": ast.Mult, "multiply": ast.Mult,
    "eq": ast.Eq, "ne": ast.NotEq, "lt": ast.Lt, "le": ast.LtE, "gt": ast.Gt, "ge": ast.GtE,
    "logical_and": ast.BitAnd, "logical_or": ast.BitOr, "logical_xor": ast.BitXor,
}  # fmt: skip
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Losses that are elementwise with reduction="none", finite at 0 with a finite derivative there,
# and the constant keywords they may carry.
_ELEMENTWISE_LOSSES = {
    "l1_loss": (), "mse_loss": (), "smooth_l1_loss": ("beta",), "huber_loss": ("delta",),
    "binary_cross_entropy_with_logits": (),  # log(2) and a gradient of sigmoid(0) - target at 0
}  # fmt: skip


@dataclass(frozen=True)
class _Reduction:
    call: ast.Call  # the node the rewrite replaces
    kind: str  # sum, prod, mean, nansum
    operands: tuple[ast.expr, ...]  # the elementwise expressions it reduces (two for a loss)
    loss: str | None = None  # the loss function's text, with its constant keywords
    loss_keywords: tuple[ast.keyword, ...] = ()
    correction: int = 1  # var and std: the divisor is the count less this
    along_selection: bool = False  # `x[m].sum(0)`: over the selected positions only, per remaining element


class MaskedReductionFixer:
    codes = frozenset({"GM402", "GM403"})
    safety = Safety.SAFE
    title = "Reduce with torch.where instead of selecting with a boolean mask (floating sums add in another order: equal up to rounding)"
    title_elementwise = (
        "Reduce with torch.where instead of selecting with a boolean mask: the elementwise work runs on every element and "
        "unselected results are dropped (floating sums add in another order: equal up to rounding)"
    )

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.Subscript, ast.Call))
        selection = selection_of(ctx, node, trusted=True) if node is not None else None
        if selection is None:
            raise DeclineError("no-node", "could not find the masked selection in the source")
        function = ctx.function_of(selection.node)
        if function is None:
            raise DeclineError("not-in-function", "the selection is not inside a function")
        try:
            reduction = _enclosing_reduction(ctx, selection.node)
        except DeclineError:
            binding = _binding(ctx, selection.node)
            if binding is None:
                raise
            try:
                return self._plan_named(finding, ctx, function, selection, binding)
            except DeclineError as declined:
                if declined.key == "mask-inline":  # `loss = loss[loss > t]`: bind the mask to a name first
                    return plan_with_mask_named(finding, ctx, binding, _mask_index(selection).mask, declined, self.plan)
                if declined.key == "mask-shape" and isinstance(selection.node, ast.Subscript):
                    # `p = probs[:, t].diagonal()[mask]`: bound to a name, its shape is checked while tracing
                    return plan_with_selected_named(finding, ctx, binding, selection.node.value, declined, self.plan)
                if declined.key != "read-after-block":
                    raise
                return plan_with_tail_copied(finding, ctx, binding, declined, self.plan)
        try:
            return self._plan_inline(finding, ctx, function, selection, reduction)
        except DeclineError as declined:
            statement = ctx.statement_of(selection.node)
            if declined.key != "mask-shape" or not isinstance(selection.node, ast.Subscript) or statement is None:
                raise
            # `bce(torch.cat(logits, dim=1)[valid], ...)`: bound to a name, its shape is checked while tracing
            return plan_with_selected_named(finding, ctx, statement, selection.node.value, declined, self.plan)

    def _plan_inline(self, finding: Finding, ctx: FixContext, function: Function, selection: Selection, reduction: _Reduction) -> Fix:
        """The selection inside the reduction's own expression (`x[m].sum()`, `F.l1_loss(p[m], t[m])`)."""
        index = _mask_index(selection)
        mask = index.mask
        # A mask known only by its name (a `padding_mask` parameter) is checked while tracing.
        named_only = ctx.kind(mask) not in BOOL_KINDS
        if named_only and not _is_reference(mask):
            raise DeclineError("not-a-mask", "the index is not a boolean mask")
        leaves = _Leaves()
        nonlinear = any([_collect(ctx, operand, index.index, leaves) for operand in reduction.operands]) or reduction.loss is not None
        check_pure(ctx, mask, "the mask (now evaluated as a where condition)")
        statement = ctx.statement_of(selection.node)
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        unproven = [leaf.tensor for leaf in leaves if _unproven(signatures, index, named_only, leaf)]
        if unproven and not (rereadable(mask) and all(_rereadable_tensor(leaf.tensor) for leaf in leaves)):
            raise DeclineError(
                "mask-shape",
                f"cannot prove the mask `{ctx.excerpt(mask, 30)}` has the shape of `{ctx.excerpt(unproven[0], 30)}` "
                "(a mask over leading dimensions selects rows), and they are not plain names to check while tracing",
            )
        _check_along(index, reduction)
        where = _where_form(ctx, index, [leaf.tensor for leaf in leaves], proven=not unproven)
        where = _averaged_safely(ctx, signatures, [reduction], [], list(leaves), where)
        replacement = _replacement(ctx, reduction, leaves, where, nonlinear, "1" if leaves.positive else "0")
        edits: list[Edit] = []
        if where.check is not None:
            replacement = checked_or_original(replacement, where.check, ctx.code(reduction.call))
            edits += [edit for helper in where.helpers for edit in helper_edits(ctx, helper)]
        target = ctx.cst_node(function, reduction.call, cst.Call)
        edits.insert(0, ctx.rewrite(function, {target: cst.parse_expression(replacement)}))
        import_edit = ctx.import_edit()
        if import_edit is not None and not unproven:
            edits.append(import_edit)
        if STD_OF in replacement:
            edits += helper_edits(ctx, STD_OF)
        elementwise = len(leaves) > 1 or any(leaf.node not in reduction.operands for leaf in leaves) or reduction.loss is not None
        return Fix(finding, self.title_elementwise if elementwise else self.title, Safety.SAFE, tuple(edits))

    def _plan_named(self, finding: Finding, ctx: FixContext, function: Function, selection: Selection, binding: ast.Assign) -> Fix:
        """`diff = pred[m] - gt[m]` then only full reductions of `diff` (`(diff ** 2).mean()`), or a
        chain of such names (`pred = pred[m]; gt = gt[m]; err = pred - gt`): each name becomes the
        elementwise work on the whole tensors (zeroed outside the mask first where the work is not
        linear, and a name that re-binds its own selection always) and each reduction keeps the
        selected results with `torch.where`, as in the one-expression case. Shapes not proven are
        checked while tracing, at each binding and at every reduction alike (the original code
        runs where the check fails)."""
        index = _mask_index(selection)
        mask = index.mask
        named_only = ctx.kind(mask) not in BOOL_KINDS  # a `padding_mask` parameter: checked while tracing
        name = binding.targets[0].id  # type: ignore[attr-defined]
        if not _is_reference(mask):
            raise DeclineError("mask-inline", f"the mask `{ctx.excerpt(mask, 30)}` is not a plain name, to read again where `{name}` is reduced")
        if any(isinstance(a, (ast.For, ast.AsyncFor, ast.While)) for a in ctx.ancestors(binding) if ctx.contains(function, a) and a is not function):
            raise DeclineError("not-a-reduction", f"`{name}` is bound in a loop")
        block = rest_of_block(ctx, binding)
        block_end = block[-1].end_lineno or block[-1].lineno
        in_try = any(isinstance(a, (ast.Try, ast.TryStar)) for a in ctx.ancestors(binding) if ctx.contains(function, a))
        nodes = list(walk(function)) if in_try else _reachable_after(list(walk(function)), block, block_end)
        check_pure(ctx, mask, "the mask (now evaluated as a where condition)")
        chain = _chain(ctx, block, index.index)
        names = frozenset(stmt.targets[0].id for stmt, _ in chain)  # type: ignore[attr-defined]
        positive = any(leaves.positive for _, leaves in chain)
        nonlinear = any(leaves.nonlinear for _, leaves in chain)
        reductions: list[tuple[_Reduction, _Leaves]] = []
        counts: list[ast.Call] = []  # `s / diff.numel()`: the count of selected elements
        for chained, _ in chain:
            bound = chained.targets[0].id  # type: ignore[attr-defined]
            _check_no_later_store(nodes, bound, chained)
            after = (chained.end_lineno or chained.lineno, chained.end_col_offset or 0)
            uses = [n for n in nodes if isinstance(n, ast.Name) and n.id == bound and isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) > after]
            if not uses and chained is binding:
                raise DeclineError("not-a-reduction", f"`{bound}` is never reduced")
            for use in uses:
                if use.lineno > block_end:
                    raise DeclineError("read-after-block", f"`{bound}` is read after the block that binds it, where it may hold the unselected value")
                if any(ctx.contains(other.value, use) for other, _ in chain):
                    continue  # elementwise work of a later name in the chain
                count = _divisor_count(ctx, use)
                if count is not None:
                    counts.append(count)
                    continue
                try:
                    reduction = _enclosing_reduction(ctx, use)
                except DeclineError as declined:
                    raise DeclineError(declined.key, f"`{bound}` (elementwise work on the selection): {declined.reason}") from None
                if any(r.call is reduction.call for r, _ in reductions):
                    continue
                _check_along(index, reduction)
                found = _Leaves(names)
                found.nonlinear = any([_collect(ctx, operand, index.index, found) for operand in reduction.operands])
                positive = positive or found.positive
                nonlinear = nonlinear or found.nonlinear or reduction.loss is not None
                reductions.append((reduction, found))
        # The mask is read again at each binding of the chain and each reduction: nothing it reads
        # may change from the binding to the last of those reads (an attribute's object included:
        # `self` of `self.mask`). A mask name bound anew after that (`pos_idx = ...` for the next
        # loss) changes nothing the rewrite reads.
        last_read = _last_read(ctx, function, [stmt for stmt, _ in chain], [r.call for r, _ in reductions] + counts)
        changed = mask_reads_changed(ctx, function, [n for n in nodes if _position(n) <= last_read], binding, mask_roots(mask))
        if changed is not None:
            root, escape = changed
            how = " is changed" if escape is None else f" may be changed through `{ctx.excerpt(escape, 40)}`"
            raise DeclineError("mask-changed", f"`{root}`{how} after `{name}` is bound: the reductions would read another mask")
        if any(_rebinds(stmt) for stmt, _ in chain):
            nonlinear = True  # `pred = pred[m]` becomes `pred = pred.masked_fill(~m, 0)`, not `pred = pred`
        fill = "1" if positive else "0"
        statement = ctx.statement_of(selection.node)
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        all_leaves = [leaf for _, leaves in chain for leaf in leaves] + [leaf for _, found in reductions for leaf in found]
        unproven = [leaf.tensor for leaf in all_leaves if _unproven(signatures, index, named_only, leaf)]
        if unproven and not (rereadable(mask) and all(_rereadable_tensor(leaf.tensor) for leaf in all_leaves)):
            raise DeclineError("mask-shape", f"cannot prove the mask `{ctx.excerpt(mask, 30)}` has the shape of `{ctx.excerpt(unproven[0], 30)}`, and they are not plain names to check while tracing")
        where = _where_form(ctx, index, [leaf.tensor for leaf in all_leaves], proven=not unproven)
        where = _averaged_safely(ctx, signatures, [r for r, _ in reductions], [stmt.value for stmt, _ in chain], all_leaves, where)
        check = where.check
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {}
        for chained, leaves in chain:
            full = {id(leaf.node): _filled(ctx, leaf, where, nonlinear, fill) for leaf in leaves}
            value = ctx.code_with(chained.value, full)
            if not leaves:
                continue  # work on names of the chain only: its text stays, and so does its meaning
            value_text = value if check is None else checked_or_original(value, check, ctx.code(chained.value))
            replacements[ctx.cst_node(function, chained.value, cst.BaseExpression)] = cst.parse_expression(value_text)  # type: ignore[type-abstract]
        for count in counts:
            text = where.count if check is None else checked_or_original(where.count, check, ctx.code(count))
            replacements[ctx.cst_node(function, count, cst.Call)] = cst.parse_expression(text)
        std_of = False
        for reduction, found in reductions:
            text = _replacement(ctx, reduction, found, where, nonlinear, fill)
            if check is not None:
                text = checked_or_original(text, check, ctx.code(reduction.call))
            replacements[ctx.cst_node(function, reduction.call, cst.Call)] = cst.parse_expression(text)
            std_of = std_of or STD_OF in text
        edits: list[Edit] = [ctx.rewrite(function, replacements)]
        if check is not None:
            edits += [edit for helper in where.helpers for edit in helper_edits(ctx, helper)]
        else:
            import_edit = ctx.import_edit()
            if import_edit is not None:
                edits.append(import_edit)
        if std_of:
            edits += helper_edits(ctx, STD_OF)
        return Fix(finding, self.title_elementwise, Safety.SAFE, tuple(edits))


# Work on a selection whose result may be boolean or integer even where the selected tensors are
# floating: comparisons, tests of each element, casts to integers.
_NOT_FLOATING_WORK = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", *_BOOL_UNARY, "long", "int", "short", "bool", "to", "type"})


def _averaged_safely(
    ctx: FixContext, signatures: Signatures, reductions: list[_Reduction], chained: list[ast.expr], leaves: list[Selection], where: _Where
) -> _Where:
    """`where`, its check extended so that a mean, variance or deviation of values not known to be
    floating is rewritten only for floating (or complex) tensors: for an integer or boolean
    selection the original raises ("mean(): could not infer output dtype"), which the rewrite's
    sum divided by a count would not, so the original code runs there (settled while tracing,
    with `_graphmend_floating`). Declines where the work on the selection may itself make integer
    or boolean values (a comparison, a cast), which a test of the selected tensors cannot see."""
    averaged = [r for r in reductions if r.kind in ("mean", *_SPREADS) and not _floating(signatures, r)]
    if not averaged:
        return where
    selections = {id(n) for leaf in leaves for n in walk(leaf.node)}  # `x[x > 0]`: the mask's own test is no work on values
    for expression in [*chained, *(operand for r in averaged for operand in r.operands)]:
        for node in walk(expression):
            if id(node) in selections:
                continue
            named = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
            if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)) or named in _NOT_FLOATING_WORK:
                raise DeclineError(
                    "mean-dtype",
                    f"`{ctx.excerpt(expression, 40)}` may be an integer or boolean tensor, whose {averaged[0].kind} raises where the rewrite would not",
                )
    if not all(_rereadable_tensor(leaf.tensor) for leaf in leaves):
        raise DeclineError("mean-dtype", "the selected tensors are not known to be floating, and not plain names to check while tracing")
    check = call_text(FLOATING, *dict.fromkeys(ctx.code(leaf.tensor) for leaf in leaves))
    return replace(where, check=check if where.check is None else f"{where.check} and {check}", helpers=(*where.helpers, FLOATING))


def _floating(signatures: Signatures, reduction: _Reduction) -> bool:
    """Whether every value `reduction` reduces is known to be floating (its mean cannot raise for its dtype)."""
    return all(signatures.is_floating(signatures._norm(signatures.of(operand).dtype)) for operand in reduction.operands)


def _divisor_count(ctx: FixContext, use: ast.Name) -> ast.Call | None:
    """`use.numel()` as the divisor of a tensor (`diff.abs().sum() / diff.numel()`): the number of
    selected elements, which the rewrite gives as the count of the mask (an int64 0-d tensor).
    Only as a divisor of a tensor, where a 0-d int64 tensor divides as the Python int did (the
    same result dtype, the count rounded to it alike); anywhere else the int stays needed."""
    call = ctx.parent(use)
    if not (isinstance(call, ast.Attribute) and call.attr == "numel"):
        return None
    call = ctx.parent(call)
    if not (isinstance(call, ast.Call) and not call.args and not call.keywords):
        return None
    division = ctx.parent(call)
    if isinstance(division, ast.BinOp) and isinstance(division.op, ast.Div) and division.right is call and ctx.kind(division.left) in TENSOR_KINDS:
        return call
    return None


def _chain(ctx: FixContext, block: list[ast.stmt], mask: ast.expr) -> list[tuple[ast.Assign, _Leaves]]:
    """The binding `block` starts with and the statements after it that bind one name to
    elementwise work on selections by `mask` or on names bound so (`gt = gt[m]`, `err = pred -
    gt`), each with the leaves found in its value. The first must be such work (or the reason it
    is not is raised)."""
    binding = block[0]
    chain: list[tuple[ast.Assign, _Leaves]] = []
    names: frozenset[str] = frozenset()
    for statement in block:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            continue
        leaves = _Leaves(names)
        try:
            leaves.nonlinear = _collect(ctx, statement.value, mask, leaves)
        except DeclineError:
            if statement is binding:
                raise
            continue
        reads_chain = any(isinstance(n, ast.Name) and n.id in names for n in walk(statement.value))
        if statement is not binding and not leaves and not reads_chain:
            continue  # arithmetic on numbers only: nothing selected
        chain.append((statement, leaves))
        names = names | {statement.targets[0].id}
    return chain


def _position(node: ast.AST) -> tuple[int, int]:
    """Where `node` starts, (0, 0) for nodes without a position (they are kept)."""
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _last_read(ctx: FixContext, function: Function, statements: list[ast.Assign], reads: list[ast.Call]) -> tuple[int, int]:
    """The end of the last place the rewrite reads the mask again: the chain's bindings and the
    reductions, each widened to the end of the outermost loop around it inside `function` (the
    binding itself is never in one), since a loop runs its earlier lines again after later ones."""
    last = (0, 0)
    for node in [*statements, *reads]:
        outer: ast.AST = node
        for ancestor in ctx.ancestors(node):
            if ancestor is function or not ctx.contains(function, ancestor):
                break
            if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While)):
                outer = ancestor
        last = max(last, (getattr(outer, "end_lineno", 0) or 0, getattr(outer, "end_col_offset", 0) or 0))
    return last


def _reachable_after(nodes: list[ast.AST], block: list[ast.stmt], block_end: int) -> list[ast.AST]:
    """The nodes of the function that the rest of the block can flow into: all of them, unless
    the block ends in `return` or `raise` (the usual `if mask is not None: pred = pred[mask]; ...;
    return loss`), when nothing after its last line runs after it. The binding is never in a loop
    here, so no earlier line runs again either; earlier lines stay in, to be conservative. (In a
    `try`, a handler or `finally` after the block may still read the names: not used there.)"""
    if not isinstance(block[-1], (ast.Return, ast.Raise)):
        return nodes
    return [node for node in nodes if getattr(node, "lineno", 0) <= block_end]


def _check_no_later_store(nodes: list[ast.AST], name: str, binding: ast.Assign) -> None:
    """Declines when `name` is stored again after `binding` (an augmented assignment's target is a store too)."""
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store) and node.lineno > binding.lineno:
            raise DeclineError("not-a-reduction", f"`{name}` is assigned again after `{name} = ...`")


def _rebinds(binding: ast.Assign) -> bool:
    """`pred = pred[m]`: the name re-binds a selection of its own value."""
    name = binding.targets[0].id  # type: ignore[attr-defined]
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(binding.value))


def _filled(ctx: FixContext, leaf: Selection, where: _Where, nonlinear: bool, fill: str) -> str:
    """The whole tensor in place of the selection `leaf`: with `fill` outside the mask where the
    work on it is not linear (a NaN or inf there would reach the gradient as `0 * nan`)."""
    return f"{ctx.atom(leaf.tensor)}.masked_fill(~{where.atom}, {fill})" if nonlinear else ctx.atom(leaf.tensor)


def _binding(ctx: FixContext, node: ast.expr) -> ast.Assign | None:
    """The `name = <elementwise work on node>` statement `node` feeds, if any."""
    while True:
        parent = ctx.parent(node)
        if isinstance(parent, ast.Assign) and parent.value is node:
            return parent if len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) else None
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            node = parent
            continue
        method = _method_call(ctx, parent, node)
        if method is not None:
            node = method[0]
            continue
        if isinstance(parent, ast.Call) and node in parent.args:
            node = parent
            continue
        return None


def _indexed_by(ctx: FixContext, node: ast.AST, mask: ast.expr) -> bool:
    """`node` selects with the very mask expression `mask` (whatever is known of its kind)."""
    if isinstance(node, ast.Subscript):
        return ctx.code(node.slice) == ctx.code(mask)
    if isinstance(node, ast.Call) and node.args:
        return ctx.code(node.args[-1]) == ctx.code(mask)
    return False


def _enclosing_reduction(ctx: FixContext, node: ast.expr) -> _Reduction:
    """The full reduction that consumes `node` through elementwise operations only."""
    while True:
        parent = ctx.parent(node)
        method = _method_call(ctx, parent, node)
        if method is not None:
            call, name = method
            if name in ("max", "min", "amax", "amin"):
                raise DeclineError("empty-selection", f"`.{name}()` of an empty selection raises; a where-based form would not")
            if name in _REDUCTIONS:
                if name != "prod" and _along_selection(call.args, call.keywords):
                    return _Reduction(call, name, (node,), along_selection=True)
                if call.args or call.keywords:
                    raise DeclineError("not-a-reduction", "the selection is not fully reduced by sum, prod or mean")
                return _Reduction(call, name, (node,))
            if name in _SPREADS:
                if call.args:
                    raise DeclineError("not-a-reduction", f"`.{name}(...)` is given a dimension: it is not a full reduction")
                return _Reduction(call, name, (node,), correction=_correction(call))
            node = call
            continue
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            node = parent
            continue
        if isinstance(parent, ast.Call) and node in parent.args:
            name = ctx.qualname(parent.func) or ""
            leaf = name.rsplit(".", 1)[-1]
            if name in ("torch.sum", "torch.prod", "torch.mean", "torch.nansum") and len(parent.args) == 1 and not parent.keywords:
                return _Reduction(parent, leaf, (node,))
            if name in ("torch.sum", "torch.mean", "torch.nansum") and parent.args[0] is node and _along_selection(parent.args[1:], parent.keywords):
                return _Reduction(parent, leaf, (node,), along_selection=True)
            if name in ("torch.var", "torch.std") and len(parent.args) == 1:
                return _Reduction(parent, leaf, (node,), correction=_correction(parent))
            if name.startswith(("torch.nn.functional.", "torch.")) and leaf in _ELEMENTWISE_LOSSES:
                return _loss_reduction(ctx, parent, leaf)
            if name.startswith("torch.") and (leaf in _BINARY or leaf in _LINEAR_UNARY | _NONLINEAR_UNARY | _BOOL_UNARY | _POSITIVE_UNARY):
                node = parent
                continue
        raise DeclineError("not-a-reduction", "the selected elements are used as a tensor, not only reduced")


def _check_along(index: MaskIndex, reduction: _Reduction) -> None:
    """A reduction over dimension 0 of a selection is one over the selected positions only
    where the mask stands first (`x[m]`, `x[m, :]`); `x[:, m].sum(0)` sums over the rows."""
    if reduction.along_selection and index.lead != 0:
        raise DeclineError("not-a-reduction", "the reduction's dimension is not the one the mask selects along")


def _along_selection(args: list[ast.expr], keywords: list[ast.keyword]) -> bool:
    """`(0)` or `(dim=0)`: a reduction over the first dimension of a selection, which holds the
    selected positions (`x[m].sum(0)` sums the selected rows of `x`)."""
    given = [*args, *(k.value for k in keywords if k.arg == "dim")]
    if len(given) != 1 or any(k.arg != "dim" for k in keywords):
        return False
    return isinstance(given[0], ast.Constant) and given[0].value == 0 and type(given[0].value) is int


def _correction(call: ast.Call) -> int:
    """The correction of a full `var`/`std` call: 1 (unbiased) unless `correction=<int>` or
    `unbiased=<bool>` says otherwise; anything else (a dimension, a name, a correction above 1) is
    declined. (With a correction of 2 and two elements torch's gradient is infinite, from a formula
    that leaves out the mean's share; the masked form's is NaN.)"""
    correction = 1
    for keyword in call.keywords:
        value = keyword.value.value if isinstance(keyword.value, ast.Constant) else None
        if keyword.arg == "correction" and type(value) is int and value in (0, 1):
            correction = value
        elif keyword.arg == "unbiased" and type(value) is bool:
            correction = int(value)
        else:
            raise DeclineError("not-a-reduction", "the variance is not a full reduction with a constant correction")
    return correction


def _method_call(ctx: FixContext, parent: ast.AST | None, receiver: ast.expr) -> tuple[ast.Call, str] | None:
    """(`receiver.name(...)`, name) when `parent` is the attribute of such a call."""
    if isinstance(parent, ast.Attribute) and parent.value is receiver:
        call = ctx.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent:
            return call, parent.attr
    return None


def _loss_reduction(ctx: FixContext, call: ast.Call, name: str) -> _Reduction:
    allowed = _ELEMENTWISE_LOSSES[name]
    if len(call.args) != 2:
        raise DeclineError("not-a-reduction", f"`{name}` is called with other than (input, target)")
    reduction = "mean"
    kept: list[ast.keyword] = []
    for keyword in call.keywords:
        if keyword.arg == "reduction" and isinstance(keyword.value, ast.Constant) and keyword.value.value in ("mean", "sum"):
            reduction = keyword.value.value
        elif keyword.arg in allowed and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, (int, float)):
            kept.append(keyword)
        else:
            raise DeclineError("not-a-reduction", f"`{name}` is not reduced to one value by its `mean` or `sum` reduction")
    return _Reduction(call, reduction, tuple(call.args), ctx.code(call.func), tuple(kept))


class _Leaves(list[Selection]):
    """The selections found under an expression, and the local names known to hold elementwise
    work on selections by the same mask (`diff = pred[m] - gt[m]`): such a name is a leaf too."""

    def __init__(self, named: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.named = named
        self.nonlinear = False  # the work on them is not linear: unselected elements are filled first
        self.positive = False  # some work needs a positive operand (`log`, a divisor): the fill is 1


def _collect(ctx: FixContext, node: ast.expr, mask: ast.expr, leaves: _Leaves) -> bool:
    """Add the selections under `node` to `leaves`; True when the work on them is not linear.
    Declines for anything but selections by `mask`, numbers and the elementwise operations above."""
    if isinstance(node, ast.Name) and node.id in leaves.named:
        return False
    selection = selection_of(ctx, node, trusted=_indexed_by(ctx, node, mask))
    if selection is not None:
        if ctx.code(selection.mask) != ctx.code(mask):
            raise DeclineError("different-masks", f"`{ctx.excerpt(node, 30)}` is selected by another mask than `{ctx.excerpt(mask, 30)}`")
        leaves.append(selection)
        return False
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return False
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return _collect(ctx, node.operand, mask, leaves)
    if isinstance(node, ast.BinOp):
        return _binary(ctx, node.op, node.left, node.right, mask, leaves)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS):
        return _binary(ctx, node.ops[0], node.left, node.comparators[0], mask, leaves)
    if isinstance(node, ast.Call) and not node.keywords:
        function, args = _call_parts(ctx, node)
        if len(args) == 1 and function in _CASTS | _LINEAR_UNARY | _BOOL_UNARY | _NONLINEAR_UNARY:
            return _collect(ctx, args[0], mask, leaves) or function in _NONLINEAR_UNARY
        if len(args) == 1 and function in _POSITIVE_UNARY:
            leaves.positive = True
            _collect(ctx, args[0], mask, leaves)
            return True
        if len(args) == 2 and function == "to" and (ctx.qualname(args[1]) or "").removeprefix("torch.") in DTYPE_NAMES:
            return _collect(ctx, args[0], mask, leaves)  # a cast to a named dtype
        if len(args) == 2 and function in _BINARY:
            return _binary(ctx, _BINARY[function](), args[0], args[1], mask, leaves)
    raise DeclineError(
        "not-elementwise",
        f"the selection is combined with `{ctx.excerpt(node, 30)}`, which is not a selection by the same mask, a number, "
        "or an elementwise operation known to be harmless on unselected elements",
    )


def _call_parts(ctx: FixContext, node: ast.Call) -> tuple[str, list[ast.expr]]:
    """("abs", [x]) for both `torch.abs(x)` and `x.abs()`; ("", []) for other calls."""
    if not isinstance(node.func, ast.Attribute):
        return "", []
    if ctx.qualname(node.func.value) == "torch":
        return node.func.attr, list(node.args)
    return node.func.attr, [node.func.value, *node.args]


def _binary(ctx: FixContext, op: ast.AST, left: ast.expr, right: ast.expr, mask: ast.expr, leaves: _Leaves) -> bool:
    if isinstance(op, (ast.Add, ast.Sub, ast.BitAnd, ast.BitOr, ast.BitXor, *_COMPARISONS)):
        return _collect(ctx, left, mask, leaves) | _collect(ctx, right, mask, leaves)
    if isinstance(op, ast.Mult):
        constant = _number(left) is not None or _number(right) is not None
        return _collect(ctx, left, mask, leaves) | _collect(ctx, right, mask, leaves) | (not constant)
    if isinstance(op, ast.Div) and _number(right) not in (None, 0):
        return _collect(ctx, left, mask, leaves)
    if isinstance(op, ast.Div) and _number(right) is None:  # a divisor selected by the mask: filled with 1
        leaves.positive = True
        _collect(ctx, left, mask, leaves)
        _collect(ctx, right, mask, leaves)
        return True
    if isinstance(op, ast.Pow) and isinstance(_number(right), int) and _number(right) >= 1:  # type: ignore[operator]
        return _collect(ctx, left, mask, leaves) or _number(right) != 1
    raise DeclineError(
        "not-elementwise",
        f"`{ctx.excerpt(left, 20)} {_OPERATOR_TEXT.get(type(op), '?')} {ctx.excerpt(right, 20)}` is not known to be finite on unselected elements",
    )


_OPERATOR_TEXT: dict[type[ast.AST], str] = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>"}


def _number(node: ast.expr) -> int | float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    return None


def _replacement(ctx: FixContext, reduction: _Reduction, leaves: list[Selection], where: _Where, nonlinear: bool, fill: str = "0") -> str:
    torch = ctx.torch_name()
    full = {id(leaf.node): _filled(ctx, leaf, where, nonlinear, fill) for leaf in leaves}
    operands = [ctx.code_with(operand, full) for operand in reduction.operands]
    if reduction.loss is not None:
        keywords = "".join(f", {k.arg}={ctx.code(k.value)}" for k in reduction.loss_keywords)
        values = f'{reduction.loss}({operands[0]}, {operands[1]}, reduction="none"{keywords})'
    else:
        values = operands[0]
    kept = f"{torch}.where({where.condition}, {values}, {{identity}})"
    if reduction.along_selection and where.check is not None:
        # the mask's dimensions of the whole tensor as one, where the selection has one (a 0-d
        # mask adds that dimension, as the selection does)
        rows = f"{kept.format(identity='0')}.reshape(-1, *{where.tensor}.shape[{where.mask}.dim():])"
        total = f"{rows}.{'nansum' if reduction.kind == 'nansum' else 'sum'}(0)"
        return f"({total} / {where.mask}.sum())" if reduction.kind == "mean" else total
    if reduction.kind in _SPREADS:
        # An empty selection: the mean divides by 1 (not 0/0, whose gradient would be NaN where
        # the original's is 0), and the variance by at most 0, which gives NaN as torch's does
        # for a count not above the correction (not a negative count's -0).
        mean = f"({kept.format(identity='0')}.sum() / {where.count}.clamp(min=1))"
        divisor = f"{where.count}" if reduction.correction == 0 else f"({where.count} - {reduction.correction}).clamp(min=0)"
        deviations = f"{torch}.where({where.condition}, ({values} - {mean}) ** 2, 0)"
        variance = f"({deviations}.sum() / {divisor})"
        return variance if reduction.kind == "var" else call_text(STD_OF, variance)
    if reduction.kind == "mean":
        return f"({kept.format(identity='0')}.sum() / {where.count})"
    return f"{kept.format(identity=_IDENTITY[reduction.kind])}.{reduction.kind}()"


def _is_reference(node: ast.expr) -> bool:
    return reference_root(node) is not None


# Methods that give a view of the same elements: cheap, effect-free, and the same shape each time
# they are evaluated with the same arguments, so a check settled while tracing may read them again.
_RESHAPING_METHODS = frozenset({"view", "reshape", "flatten"})


def _rereadable_tensor(node: ast.expr) -> bool:
    """A tensor expression a check settled while tracing may evaluate again: a name or attribute
    chain, or one reshaped by number literals (`epe.view(-1)`, `x.flatten(1)`, RAFT's
    `epe.view(-1)[valid.view(-1)]`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RESHAPING_METHODS:
        return not node.keywords and all(number_literal(a) for a in node.args) and _rereadable_tensor(node.func.value)
    return _is_reference(node)


@dataclass(frozen=True)
class _Where:
    """How the rewrite writes the mask: the `where` condition (and its atom, negated for a fill),
    the count of selected elements a mean divides by, and the check settled while tracing (None
    where the shapes are proven) with the helpers it needs."""

    condition: str
    atom: str
    count: str
    check: str | None
    helpers: tuple[str, ...]
    mask: str = ""  # the mask's own text
    tensor: str = ""  # the first selected tensor's text (the others have its shape)


def _mask_index(selection: Selection) -> MaskIndex:
    index = mask_index(selection.mask)
    if index is None:
        raise DeclineError("not-a-mask", "the index is not a boolean mask, alone or among full slices (`:`, `...`)")
    return index


def _unproven(signatures: Signatures, index: MaskIndex, named_only: bool, leaf: Selection) -> bool:
    """Whether the mask's shape against `leaf`'s tensor is left to the check while tracing: always
    for a mask among slices (`x[:, m]`), whose dimensions the analysis does not place."""
    return index.among_slices or named_only or not signatures.equal_shapes(signatures.of(index.mask), signatures.of(leaf.tensor))


def _where_form(ctx: FixContext, index: MaskIndex, tensors: list[ast.expr], proven: bool) -> _Where:
    """The mask as the rewrite writes it. A mask proven to have the tensors' shape is the `where`
    condition as it is. Any other is checked while tracing (`_graphmend_mask_spans`) and spread
    over the tensor's other dimensions (`_graphmend_spread_mask`): a mask over rows (`x[m]` with
    fewer dimensions than `x`) or among slices (`x[:, m]`) selects whole rows or columns, and a
    mean divides by the count of the spread mask over the whole tensor (every selected element,
    as `x[m].mean()` counts them)."""
    mask = ctx.code(index.mask)
    if proven:
        atom = ctx.atom(index.mask)
        return _Where(mask, atom, f"{atom}.sum()", None, (), atom)
    values = list(dict.fromkeys(ctx.code(tensor) for tensor in tensors))
    lead = "None" if index.lead is None else str(index.lead)
    spread = call_text(SPREAD_MASK, mask, values[0], lead)
    check = call_text(MASK_SPANS, mask, lead, str(index.rest), *values)
    return _Where(spread, spread, f"{spread}.expand_as({ctx.atom(tensors[0])}).sum()", check, (MASK_SPANS, SPREAD_MASK), ctx.atom(index.mask), ctx.atom(tensors[0]))
