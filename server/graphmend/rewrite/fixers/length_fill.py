"""A loop over per-row lengths that fills each row's slice before or past its length -> one
`masked_fill_` with a broadcast comparison of positions and lengths.

    for i, length in enumerate(lengths):          if _graphmend_lengths_fit(lengths, mask, 1):
        length = length.item()               ->       mask.masked_fill_(_graphmend_length_positions(lengths, mask, 1, False), 0)
        mask[i, length:] = 0                      else:
                                                      <the loop, as it was>

Speech and NLP code marks padding this way. Each iteration reads a length from the data (`.item()`,
`int()`, `.tolist()`, or a 0-d tensor used as a slice bound), which dynamo cannot do inside a loop:
it gives up on the whole function. The comparison `positions >= length` (`<` for `[:length]`) of
every row at once selects exactly the elements the slices select, negative lengths included (a
slice bound `-k` counts from the end: the helper maps it the same way), so the tensor ends with the
same values, and the same gradient (zero where filled). The fill happens in place on the same
tensor, as the slice assignment did.

Preconditions, checked here: the loop is `for i, n in enumerate(<lengths>)` (or `<lengths>.tolist()`)
or `for i in range(len(<lengths>))` with `<lengths>[i]` as the bound; its body is an optional
`n = n.item()` / `n = int(n)` and one write `t[i, :, ..., n:] = v` (or `[:n]`, or `.fill_(v)` /
`.zero_()` of that slice) of a number literal, or a copy of the same slice of another tensor
(`out[i, :n] = src[i, :n]` -> `out.copy_(torch.where(<positions>, src, out))`, with `src` checked
while tracing to have `out`'s dtype, shape and device); `i` and `n` are not read after the loop;
the target is a local name bound to a new tensor (arithmetic, a constructor: never a view or an
expanded tensor) after the lengths and the source were bound (so neither can be a view of it). Checked while tracing, where dynamo knows shapes and
dtypes (no break): the lengths are a 1-d integer tensor with one entry per row of the target, which
has the filled dimension; elsewhere the loop runs as before.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ...astwalk import walk
from ...findings import Finding
from ..aliasing import is_fresh
from ..compile_checks import LENGTH_POSITIONS, LENGTHS_FIT, SAME_TYPE, call_text, helper_edits
from ..context import FixContext
from ..flow import is_name, reaching_definition, read_after
from ..model import DeclineError, Fix, Safety
from ..selections import number_literal, reference_root

TITLE = (
    "Fill every row's slice by its length with one masked_fill_ instead of a loop over the lengths "
    "(same values; the loop runs as before where the lengths do not fit the tensor's rows)"
)


@dataclass(frozen=True)
class _Loop:
    """What the loop does: fills `target`'s slice of dimension `dim` before (`prefix`) or from
    each row's entry of `lengths`, with `value`."""

    lengths: ast.expr
    target: ast.expr
    dim: int
    prefix: bool
    value: ast.expr  # a number literal, or (a copy) the same slice of `source`
    source: ast.expr | None = None


class LengthFillFixer:
    codes = frozenset({"GM201", "GM202", "GM203", "GM205"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        loop = next((a for a in ctx.ancestors(node) if isinstance(a, ast.For)), None) if node is not None else None
        function = ctx.function_of(loop) if loop is not None else None
        if loop is None or function is None or not ctx.contains(function, loop):
            raise DeclineError("not-a-length-loop", "the value is not read in a loop over lengths")
        found = _match(ctx, loop)
        _check_target_is_new(ctx, function, loop, found)
        for name in _loop_names(loop):
            if read_after(ctx, loop, name):
                raise DeclineError("loop-name-read-after", f"`{name}` is read after the loop, which would leave it unset")
        lengths, target = ctx.code(found.lengths), ctx.code(found.target)
        check = call_text(LENGTHS_FIT, lengths, target, str(found.dim))
        positions = call_text(LENGTH_POSITIONS, lengths, target, str(found.dim), str(found.prefix))
        if found.source is None:
            fill = f"{ctx.atom(found.target)}.masked_fill_({positions}, {ctx.code(found.value)})"
        else:  # a copy: the source's own values where the slices are, the target's elsewhere
            source = ctx.code(found.source)
            check += f" and {call_text(SAME_TYPE, target, source)}"
            fill = f"{ctx.atom(found.target)}.copy_({ctx.torch_name()}.where({positions}, {source}, {target}))"
        text = f"if {check}:\n    {fill}\nelse:\n    pass\n"
        replacement = cst.parse_statement(text)
        assert isinstance(replacement, cst.If) and isinstance(replacement.orelse, cst.Else)
        original = ctx.cst_node(function, loop, cst.For)
        orelse = replacement.orelse.with_changes(body=replacement.orelse.body.with_changes(body=[original]))
        edits = [ctx.rewrite(function, {original: replacement.with_changes(orelse=orelse)})]
        edits += helper_edits(ctx, LENGTHS_FIT) + helper_edits(ctx, LENGTH_POSITIONS)
        if found.source is not None:
            edits += helper_edits(ctx, SAME_TYPE)
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, TITLE, Safety.SAFE, tuple(edits))


def _match(ctx: FixContext, loop: ast.For) -> _Loop:
    """The loop's lengths, target, dimension, side and value, or the reason it is not such a loop."""
    if loop.orelse:
        raise DeclineError("not-a-length-loop", "the loop has an `else` clause")
    index, bound_name, lengths = _header(loop)
    body = list(loop.body)
    if bound_name is not None and len(body) == 2 and _converts(body[0], bound_name):
        body = body[1:]  # `n = n.item()` / `n = int(n)`: the same bound, as a Python int
    if len(body) != 1:
        raise DeclineError("not-a-length-loop", "the loop does more than fill one slice per row")
    subscript, value = _write(body[0])
    parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    if len(parts) < 2 or not (isinstance(parts[0], ast.Name) and parts[0].id == index):
        raise DeclineError("not-a-length-loop", f"the write does not index row `{index}` first")
    sliced = [n for n, part in enumerate(parts) if isinstance(part, ast.Slice) and not _full(part)]
    if len(sliced) != 1 or not all(_full(p) for n, p in enumerate(parts[1:], 1) if n != sliced[0]):
        raise DeclineError("not-a-length-loop", "the write's other dimensions are not whole (`:`)")
    bound = parts[sliced[0]]
    assert isinstance(bound, ast.Slice)
    if bound.step is not None or (bound.lower is None) == (bound.upper is None):
        raise DeclineError("not-a-length-loop", "the slice has a step, or bounds on both sides")
    prefix = bound.upper is not None
    if not _is_length(bound.upper if prefix else bound.lower, index, bound_name, lengths):  # type: ignore[arg-type]
        raise DeclineError("not-a-length-loop", "the slice bound is not the row's length")
    target = subscript.value
    source = _copied_from(value, subscript) if isinstance(body[0], ast.Assign) else None
    if not number_literal(value) and source is None:
        raise DeclineError("fill-value", "the value is neither a number literal nor the same slice of another tensor")
    roots = [reference_root(target), reference_root(lengths)] + ([reference_root(source)] if source is not None else [])
    if None in roots or len(set(roots)) < len(roots):
        raise DeclineError("not-a-length-loop", "the target, the lengths or the source is not a plain name or attribute (or two are one)")
    for part in (target, source):
        if part is not None and any(isinstance(n, ast.Name) and n.id in (index, bound_name) for n in walk(part)):
            raise DeclineError("not-a-length-loop", "the target or the source depends on the loop's names")
    return _Loop(lengths, target, sliced[0], prefix, value, source)


def _copied_from(value: ast.expr, written: ast.Subscript) -> ast.expr | None:
    """`src` where `value` is `src[<the written slice>]` (`out[i, :n] = src[i, :n]`)."""
    if isinstance(value, ast.Subscript) and ast.dump(value.slice) == ast.dump(written.slice):
        return value.value
    return None


def _check_target_is_new(ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For, found: _Loop) -> None:
    """The target is a local tensor made in this function (`mask = torch.zeros(...)`, `y = x * 2`)
    before which the lengths and the source were already bound (or are new tensors made after it):
    then it shares memory with neither
    (the loop reads lengths and source rows after writing earlier rows: through a view of one
    buffer the original would read what it wrote), and it is not an expanded view (which
    `masked_fill_` warns about and `copy_` refuses)."""
    target = found.target
    if not isinstance(target, ast.Name):
        raise DeclineError("length-fill-alias", f"`{ctx.excerpt(target, 30)}` is not a local tensor made in this function")
    value = reaching_definition(ctx, loop, target.id)
    if value is None or not is_fresh(ctx, value):
        raise DeclineError("length-fill-alias", f"`{target.id}` is not known to be a new tensor made here (it may share memory with the lengths or the source)")
    made = ctx.statement_of(value)
    made_line = made.lineno if made is not None else loop.lineno
    for other in (found.lengths, found.source):
        root = reference_root(other) if other is not None else None
        if root is None:
            continue
        for node in walk(function):
            if not (isinstance(node, ast.Name) and node.id == root and isinstance(node.ctx, ast.Store) and node.lineno >= made_line):
                continue
            binding = ctx.parent(node)  # a new tensor bound later cannot be a view of the target
            if not (isinstance(binding, ast.Assign) and binding.targets == [node] and is_fresh(ctx, binding.value)):
                raise DeclineError("length-fill-alias", f"`{root}` is bound after `{target.id}` is made: it may be a view of it")


def _header(loop: ast.For) -> tuple[str, str | None, ast.expr]:
    """(row name, length name or None, lengths) of `for i, n in enumerate(lengths[.tolist()])` or
    `for i in range(len(lengths))`."""
    iterator, target = loop.iter, loop.target
    if not (isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and len(iterator.args) == 1 and not iterator.keywords):
        raise DeclineError("not-a-length-loop", "the loop is not over `enumerate(lengths)` or `range(len(lengths))`")
    argument = iterator.args[0]
    if iterator.func.id == "enumerate":
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)):
            raise DeclineError("not-a-length-loop", "the loop does not name the row and its length")
        row, length = (e.id for e in target.elts)  # type: ignore[attr-defined]
        if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) and argument.func.attr == "tolist" and not argument.args:
            argument = argument.func.value
        return row, length, argument
    if iterator.func.id == "range" and isinstance(target, ast.Name):
        if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and argument.func.id == "len" and len(argument.args) == 1:
            return target.id, None, argument.args[0]
    raise DeclineError("not-a-length-loop", "the loop is not over `enumerate(lengths)` or `range(len(lengths))`")


def _converts(statement: ast.stmt, name: str) -> bool:
    """`n = n.item()` or `n = int(n)`."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and is_name(statement.targets[0], name)):
        return False
    return _as_int_of(statement.value, lambda operand: is_name(operand, name))


def _write(statement: ast.stmt) -> tuple[ast.Subscript, ast.expr]:
    """`t[...] = v`, `t[...].fill_(v)` or `t[...].zero_()`: the slice written and the value."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Subscript):
        return statement.targets[0], statement.value
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Subscript) and not call.keywords:
            if func.attr == "fill_" and len(call.args) == 1:
                return func.value, call.args[0]
            if func.attr == "zero_" and not call.args:
                return func.value, ast.Constant(value=0)
    raise DeclineError("not-a-length-loop", "the loop body does not fill a slice")


def _is_length(bound: ast.expr, row: str, length: str | None, lengths: ast.expr) -> bool:
    """The bound is the row's length: `n` (as an int or a 0-d tensor) or `lengths[i]`, either
    converted with `.item()` or `int()`."""
    if length is not None:
        return is_name(bound, length) or _as_int_of(bound, lambda operand: is_name(operand, length))

    def is_entry(node: ast.expr) -> bool:
        return isinstance(node, ast.Subscript) and is_name(node.slice, row) and ast.dump(node.value) == ast.dump(lengths)

    return is_entry(bound) or _as_int_of(bound, is_entry)


def _as_int_of(node: ast.expr, operand_ok: Callable[[ast.expr], bool]) -> bool:
    """`x.item()` or `int(x)` with `operand_ok(x)`."""
    if isinstance(node, ast.Call) and not node.keywords:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
            return operand_ok(node.func.value)
        if isinstance(node.func, ast.Name) and node.func.id == "int" and len(node.args) == 1:
            return operand_ok(node.args[0])
    return False


def _loop_names(loop: ast.For) -> list[str]:
    return [n.id for n in walk(loop.target) if isinstance(n, ast.Name)]


def _full(part: ast.expr) -> bool:
    return isinstance(part, ast.Slice) and part.lower is None and part.upper is None and part.step is None
