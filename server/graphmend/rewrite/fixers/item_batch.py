"""GM201: several `.item()` reads of 0-d tensors in a row -> one `.tolist()` of them stacked.

Metrics and losses handed back as Python numbers are often read one at a time:
    metrics = {                                 _graphmend_tensors = (epe.mean(), (epe < 1).float().mean(),)
        "epe": epe.mean().item(),               _graphmend_values = torch.stack(_graphmend_tensors).tolist() if
        "1px": (epe < 1).float().mean().item(),     _graphmend_stackable(*_graphmend_tensors) else [t.item() for t in _graphmend_tensors]
    }                                  ->   metrics = {
                                                "epe": _graphmend_values[0],
                                                "1px": _graphmend_values[1],
                                            }
Each `.item()` is a graph break (dynamo reports one per line) and a device sync. The numbers are
wanted as Python numbers (returned, logged, stored), so the scalar fix, which keeps a 0-d tensor,
declines them; but they can be read together: `torch.stack(tensors).tolist()` converts each
element exactly as `.item()` converts a 0-d tensor of that dtype, so the numbers are the same,
with one break and one sync. That is done where the tensors are 0-d, of one dtype, on one device
(settled while tracing: `_graphmend_stackable`); otherwise each `.item()` runs in turn. The
stacking is written in the function itself, not in a helper: dynamo reports a break inside a
called helper twice (once inlining it, once compiling its own frame).

The tensors are now evaluated before the first number is read, all of them one after the other, so
(each a precondition, with a decline fixture):
- each `.item()` is of a tensor the analysis knows is 0-d (a full reduction): then `.item()` cannot
  raise, and evaluating the next tensor first cannot hide its error;
- each tensor expression is pure (`purity.check_pure`), so evaluating it earlier changes nothing
  it reads or does; and every read runs whenever its statement runs (not in a branch of a
  conditional expression, after the first operand of `and`/`or`, in a comprehension or lambda);
- in one statement, nothing between the first and the last read may have an effect (a call that
  may, `:=`, `yield`, `await`) or raise (a call, an index, a division): its error would now come
  after the later tensors, which may raise first; the reads' consumer (a logger, a dict display)
  runs after its arguments, as before; no read is shown by an `f"{t.item()=}"` field;
- across statements, which follow each other in one block, each assigning, returning or being an
  expression: a statement before the last may only bind plain local names (no call with an
  effect, no `+=`, no store to an attribute or item, no global): if a later tensor raises, the
  original had done that statement's work and the rewrite has not, which only a handler in the
  function could see, so there must be none (no enclosing `try`); no statement binds a name a
  later tensor reads;
- they are on at least two lines, counted where each `.item` is written (the line dynamo reports
  for a read spanning several): dynamo already reports reads on one line as one break;
- a read whose tensor is known to have another dtype than the first's (an int64 count among
  float32 means, a bool among floats) keeps its own `.item()`, since stacking would promote it.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from ...analysis.kinds import Kind
from ...analysis.symbols import bound_names
from ...astwalk import walk
from ...findings import Finding
from ..compile_checks import STACKABLE, helper_edits
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure, is_pure
from ..py_types import Function, nodes_in_scope
from ..signatures import Signatures, floating_names
from .generated import fresh_name

_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
_ZERO_D = (Kind.SCALAR, Kind.BOOL_SCALAR)  # not RANDOM_NUMBER: a Python number where run eagerly


@dataclass
class _Read:
    call: ast.Call  # `<tensor>.item()`
    statement: ast.stmt


class ItemBatchFixer:
    codes = frozenset({"GM201"})
    safety = Safety.SAFE
    title = "Read the {count} numbers with one `.tolist()` of the stacked 0-d tensors instead of {count} `.item()` calls (one graph break and one device sync instead of {count})"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not (isinstance(call, ast.Call) and _is_item(call)):
            raise DeclineError("not-an-item-read", "the conversion is not `<tensor>.item()`")
        function = ctx.function_of(call)
        statement = ctx.statement_of(call)
        if function is None or statement is None or not isinstance(statement, _SIMPLE):
            raise DeclineError("not-an-item-read", "the `.item()` is not in a simple statement of a function")
        if ctx.kind(call.func.value) not in _ZERO_D:  # type: ignore[attr-defined]
            raise DeclineError("not-one-value", f"cannot prove `{ctx.excerpt(call.func.value, 30)}` is 0-d, so `.item()` may raise")  # type: ignore[attr-defined]
        reads = _same_dtype(ctx, function, statement, _run(ctx, function, statement, call))
        # dynamo reports a read at the line of its `.item` (a read spanning lines ends there)
        if len({read.call.func.end_lineno for read in reads}) < 2:
            raise DeclineError("one-line", "no other `.item()` of a 0-d tensor follows on another line: dynamo reports the reads of one line as one break")
        return self._fix(finding, ctx, function, reads)

    def _fix(self, finding: Finding, ctx: FixContext, function: Function, reads: list[_Read]) -> Fix:
        tensors = fresh_name(function, "_graphmend_tensors")
        values = fresh_name(function, "_graphmend_values")
        torch = ctx.torch_name()
        replacements: dict[cst.CSTNode, object] = {}
        for number, read in enumerate(reads):
            target = ctx.cst_node(function, read.call, cst.Call)
            replacements[target] = cst.parse_expression(f"{values}[{number}]")
        first = ctx.cst_node(function, reads[0].statement, cst.SimpleStatementLine)
        parts = [_tensor_text(ctx, read.call) for read in reads]
        listed = ", ".join(parts)
        if "\n" in listed or len(listed) + len(tensors) + reads[0].statement.col_offset > 90:
            # one tensor per line, as a formatter would (continuation lines are indented with the block)
            listed = "\n" + "".join(f"    {part},\n" for part in parts)
        bindings = [
            cst.parse_statement(f"{tensors} = ({listed})\n"),
            cst.parse_statement(
                f"{values} = {torch}.stack({tensors}).tolist() if {STACKABLE}(*{tensors}) else [t.item() for t in {tensors}]\n"
            ),
        ]

        def with_bindings(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.BaseStatement]:
            moved = bindings[0].with_changes(leading_lines=first.leading_lines)  # type: ignore[union-attr]
            return cst.FlattenSentinel([moved, bindings[1], updated.with_changes(leading_lines=())])  # type: ignore[attr-defined, list-item]

        replacements[first] = with_bindings
        edits = [ctx.rewrite(function, replacements)]  # type: ignore[arg-type]
        edits += helper_edits(ctx, STACKABLE)  # with `import torch` first where the module has none
        return Fix(finding, self.title.format(count=len(reads)), Safety.SAFE, tuple(edits), full=False)


def _same_dtype(ctx: FixContext, function: Function, statement: ast.stmt, reads: list[_Read]) -> list[_Read]:
    """The reads whose tensors are not known to have another dtype than the first one's (stacked,
    an int64 count and a float32 mean would both become floats; where it is not known, the
    helper settles it while tracing). The others keep their own `.item()`: they read pure
    tensors, so when they are evaluated relative to the batch changes nothing."""
    signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
    first = reads[0].call.func.value  # type: ignore[attr-defined]
    boolean = ctx.kind(first) is Kind.BOOL_SCALAR
    return [
        read for read in reads
        if (ctx.kind(read.call.func.value) is Kind.BOOL_SCALAR) == boolean  # type: ignore[attr-defined]
        and not signatures.known_different(signatures.of(first), signatures.of(read.call.func.value))  # type: ignore[attr-defined]
    ]


def _is_item(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item"
        and not node.args and not node.keywords
    )


def _tensor_text(ctx: FixContext, call: ast.Call) -> str:
    text = ctx.code(call.func.value)  # type: ignore[attr-defined]
    return f"({text})" if "\n" in text else text


def _reads_in(ctx: FixContext, statement: ast.stmt) -> list[ast.Call] | None:
    """The `.item()` calls of 0-d tensors a statement makes, in source order; None where the
    statement reads a number only under a condition (a branch of `a if c else b`, an operand of
    `and`/`or` after the first, a chained comparison's later operands) or per element (in a
    comprehension or lambda): evaluated up front, such a tensor would be built where the original
    did not build it."""
    conditional: set[int] = set()
    for node in nodes_in_scope([statement]):
        parts: Sequence[ast.AST] = []
        if isinstance(node, ast.IfExp):
            parts = [node.body, node.orelse]
        elif isinstance(node, ast.BoolOp):
            parts = node.values[1:]
        elif isinstance(node, ast.Compare) and len(node.ops) > 1:
            parts = node.comparators[1:]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
            parts = [node]
        conditional.update(id(n) for part in parts for n in walk(part))
    found: list[ast.Call] = []
    for node in walk(statement):
        if _is_item(node):
            if id(node) in conditional:
                return None
            if ctx.kind(node.func.value) in _ZERO_D:  # type: ignore[attr-defined]
                found.append(node)  # type: ignore[arg-type]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _run(ctx: FixContext, function: Function, statement: ast.stmt, call: ast.Call) -> list[_Read]:
    """The reads to batch: those of `statement`, then those of the statements that follow it in
    its block while the preconditions of the module docstring hold (the engine plans the first
    finding of a run first; a later one starts its run at its own statement)."""
    own = _reads_in(ctx, statement)
    if own is None:
        raise DeclineError("conditional-read", "the statement reads a number only under a condition or per element: evaluating its tensor up front would build it where the original did not")
    if not any(c is call for c in own):
        raise DeclineError("not-an-item-read", "the `.item()` is not read every time its statement runs")
    reads = [_Read(c, statement) for c in own]  # the whole statement's, whichever finding asks
    _check_statement(ctx, statement, [r.call for r in reads])
    block = ctx.block_of(statement)
    position = next((i for i, s in enumerate(block) if s is statement), len(block))
    changed = _bound_names(statement)
    # Across statements, an earlier statement's work must leave nothing a later tensor's error
    # could expose as undone: only plain local names bound, no handler in the function to see it.
    extend = not _changes_state(ctx, function, statement, [r.call for r in reads]) and not _in_try(ctx, function, statement)
    for following in block[position + 1 :]:
        if not extend or isinstance(statement, ast.Return) or not isinstance(following, _SIMPLE):
            break
        calls = _reads_in(ctx, following)
        if not calls:
            break
        try:
            _check_statement(ctx, following, calls)
        except DeclineError:
            break
        if any(n.id in changed for c in calls for n in walk(c.func.value) if isinstance(n, ast.Name)):  # type: ignore[attr-defined]
            break  # it reads what an earlier statement of the run binds
        reads += [_Read(c, following) for c in calls]
        changed |= _bound_names(following)
        extend = not _changes_state(ctx, function, following, calls)
        statement = following
    return reads


def _check_statement(ctx: FixContext, statement: ast.stmt, calls: list[ast.Call]) -> None:
    """Within one statement: each read's tensor is pure; nothing else runs between the first and
    the last read that could have an effect or raise (its error would now come after the tensors
    of the later reads are evaluated, which may raise first); no read is shown by a
    self-documenting f-string (`f"{t.item()=}"` prints the expression's text)."""
    for call in calls:
        check_pure(ctx, call.func.value, f"`{ctx.excerpt(call.func.value, 30)}` (now evaluated before the numbers before it are read)")  # type: ignore[attr-defined]
        if _self_documenting(ctx, call):
            raise DeclineError("self-documenting", f"`{ctx.excerpt(call, 30)}` is shown as written by an `=` f-string field")
    first, last = (calls[0].lineno, calls[0].col_offset), (calls[-1].end_lineno or calls[-1].lineno, calls[-1].end_col_offset or 0)
    inside = {id(n) for c in calls for n in walk(c)}
    for node in nodes_in_scope([statement]):
        if isinstance(node, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)):
            raise DeclineError("effect-between-reads", f"`{ctx.excerpt(node, 30)}` binds a name or suspends between the reads")
        if id(node) in inside or all(ctx.contains(node, c) for c in calls):
            continue  # a read, its tensor, or the consumer of every read (its arguments are evaluated first)
        position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if _is_item(node):  # a read not batched (its tensor is not known 0-d): it may raise
            if first < position < last:
                raise DeclineError("raises-between-reads", f"`{ctx.excerpt(node, 30)}` may raise between two batched `.item()` reads")
            continue
        if isinstance(node, ast.Call) and not is_pure(ctx, node):
            raise DeclineError("effect-between-reads", f"`{ctx.excerpt(node, 30)}` may have an effect between two `.item()` reads, which would now come after both tensors are evaluated")
        if first < position < last and _may_raise(node):
            raise DeclineError("raises-between-reads", f"`{ctx.excerpt(node, 30)}` may raise between two `.item()` reads: a later tensor, now evaluated first, could raise another error")


def _may_raise(node: ast.AST) -> bool:
    """Work between two reads that can raise on its values: a call, an index, a division."""
    if isinstance(node, (ast.Call, ast.Subscript)):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift))


def _self_documenting(ctx: FixContext, call: ast.Call) -> bool:
    """Whether `call` is the expression of an f-string field written `{expr=}`."""
    parent = ctx.parent(call)
    if not isinstance(parent, ast.FormattedValue) or parent.value is not call:
        return False
    line = ctx.source.lines[(call.end_lineno or call.lineno) - 1]
    return line[call.end_col_offset or 0 :].lstrip().startswith("=")


def _changes_state(ctx: FixContext, function: Function, statement: ast.stmt, calls: list[ast.Call]) -> bool:
    """Whether the statement does more than bind plain local names: a call that may have an
    effect (after its reads), an augmented assignment (in place on a tensor), a store to an
    attribute or item, a global or nonlocal name. The reads after it cannot move before it."""
    if isinstance(statement, ast.AugAssign):
        return True
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Starred)) for t in targets for n in walk(t) if not isinstance(n, ast.expr_context)):
            return True
        declared = {name for n in walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        if _bound_names(statement) & declared:
            return True
    return any(
        isinstance(node, ast.Call) and not _is_item(node) and not any(ctx.contains(c.func.value, node) for c in calls) and not is_pure(ctx, node)  # type: ignore[attr-defined]
        for node in nodes_in_scope([statement])
    )


def _in_try(ctx: FixContext, function: Function, statement: ast.stmt) -> bool:
    return any(isinstance(a, (ast.Try, ast.TryStar)) for a in ctx.ancestors(statement) if ctx.contains(function, a))


def _bound_names(statement: ast.stmt) -> set[str]:
    """The names a statement binds."""
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return {name for target in targets for name in bound_names(target)}
