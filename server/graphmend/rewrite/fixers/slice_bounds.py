"""A loop over a tensor built from Python numbers only to read its entries back as slice bounds ->
the same entries as Python ints.

    ends = torch.tensor(sizes).cumsum(-1)                 ends = _graphmend_slice_bounds(sizes, -1)
    starts = torch.tensor([0] + sizes[:-1]).cumsum(-1) -> starts = _graphmend_slice_bounds([0] + sizes[:-1], -1)
    for start, end in zip(starts, ends):                  for start, end in zip(starts, ends):
        mask[start:end, start:end] = 0                        mask[start:end, start:end] = 0

transformers' pixtral builds its block-diagonal attention mask this way (`generate_block_attention_
mask`). Iterating a 1-d tensor gives 0-d tensors, and dynamo cannot use one as a slice bound
without its value: the break is inside a loop, so the whole function runs eagerly. A slice bound is
read through `__index__`, so a 0-d integer tensor and the Python int it holds select the same
elements (negative bounds included); the helper gives those ints, which dynamo traces (it unrolls
a loop over a list).

Which values give the same bounds (measured, torch 2.13): a list or tuple of Python ints gives an
int64 tensor, whose entries and running sums are the ints and their Python running sums as long as
they fit in int64. Everything else keeps the tensor, decided by the helper when it runs (Python
values are constants to dynamo: no break): bools (a bool tensor; its `cumsum` is int64), floats (a
float tensor, which raises as a bound with another message than a Python float does), 0-d tensors
in the list (Python sums of them stay tensors), nested lists (1-d rows, not numbers), ints past
int64 (`torch.tensor` raises ValueError; a running sum past int64 wraps in the tensor, not in
Python), numpy integers and a tensor given whole (`torch.tensor` warns about copying it, from the
helper's line now). Under dynamo the test costs no break either: ints read from shapes pass it
as the ints they are, also where they are symbolic (`dynamic=True`, measured).

Preconditions, checked here: the loop is `for b in name` or `for a, b in zip(name, other)` (no
`else`, no keywords to `zip`), each iterated name bound just before (on every path) to
`torch.tensor(<values>)` with no other argument, optionally followed by `.cumsum(0)` or
`.cumsum(-1)` (the same sums for the 1-d lists the helper turns into ints); those names are read
nowhere else in the function (a list is not a tensor anywhere else), and the values are not a
tensor made in the function (nothing to gain: the helper would give it back); the loop's names
are read in its body only as the start or stop of a slice of something known to be a tensor, list
or tuple (each reads a bound through `__index__`; a custom `__getitem__` could tell an int from a
tensor), and not after the loop (they would hold ints there).
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import MAYBE_PYTHON_KINDS, TENSOR_KINDS, Kind
from ...astwalk import walk
from ...findings import Finding
from ..compile_checks import SLICE_BOUNDS, call_text, helper_edits
from ..context import FixContext
from ..flow import parameter_names, reaching_definition, read_after
from ..model import DeclineError, Fix, Safety

TITLE = (
    "Build the loop's slice bounds as Python ints instead of a tensor of Python numbers "
    "(the same bounds; any values other than int64-sized ints keep the tensor as before)"
)
_CUMSUM_DIMS = (0, -1)
# What reads a slice's bounds through `__index__`: tensors, and lists and tuples of Python values.
_SLICED_ALIKE = (TENSOR_KINDS - MAYBE_PYTHON_KINDS) | {Kind.PY_SEQ}


class SliceBoundsFixer:
    codes = frozenset({"GM205"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        loop = next((a for a in ctx.ancestors(node) if isinstance(a, ast.For)), None) if node is not None else None
        function = ctx.function_of(loop) if loop is not None else None
        if loop is None or function is None or not ctx.contains(function, loop):
            raise DeclineError("not-a-bounds-loop", "the bound is not read in a loop")
        variables, iterated = _header(loop)
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {}
        for name in iterated:
            value = reaching_definition(ctx, loop, name)
            values, dim = _tensor_of_numbers(ctx, function, value, name)
            assert value is not None
            _check_read_only_by(function, name, loop)
            arguments = [ctx.code(values)] + ([str(dim)] if dim is not None else [])
            replacements[ctx.cst_node(function, value, cst.Call)] = cst.parse_expression(call_text(SLICE_BOUNDS, *arguments))
        for name in variables:
            _check_only_bounds(ctx, loop, name)
            if read_after(ctx, loop, name):
                raise DeclineError("loop-name-read-after", f"`{name}` is read after the loop, where it would hold an int instead of a tensor")
        edits = [ctx.rewrite(function, replacements), *helper_edits(ctx, SLICE_BOUNDS)]
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, TITLE, Safety.SAFE, tuple(edits))


def _header(loop: ast.For) -> tuple[list[str], list[str]]:
    """(the loop's names, the names it iterates) of `for b in name` or `for a, b in zip(x, y)`."""
    if loop.orelse:
        raise DeclineError("not-a-bounds-loop", "the loop has an `else` clause")
    target, iterator = loop.target, loop.iter
    if isinstance(target, ast.Name) and isinstance(iterator, ast.Name):
        return [target.id], [iterator.id]
    zipped = isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and iterator.func.id == "zip"
    if not (zipped and isinstance(target, ast.Tuple) and isinstance(iterator, ast.Call) and not iterator.keywords):
        raise DeclineError("not-a-bounds-loop", "the loop is not over a name or `zip` of names")
    if len(target.elts) != len(iterator.args) or not all(isinstance(e, ast.Name) for e in target.elts + iterator.args):
        raise DeclineError("not-a-bounds-loop", "the loop does not name one value of each name it zips")
    variables = [e.id for e in target.elts]  # type: ignore[attr-defined]
    iterated = [a.id for a in iterator.args]  # type: ignore[attr-defined]
    if len(set(variables + iterated)) < len(variables) + len(iterated):
        raise DeclineError("not-a-bounds-loop", "the loop's names repeat, or rebind a name it iterates")
    return variables, iterated


def _tensor_of_numbers(ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, value: ast.expr | None, name: str) -> tuple[ast.expr, int | None]:
    """(values, cumsum dimension or None) of `torch.tensor(values)[.cumsum(0 | -1)]`."""
    dim: int | None = None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "cumsum":
        dim = _cumsum_dim(value)
        value = value.func.value
    built = isinstance(value, ast.Call) and ctx.qualname(value.func) == "torch.tensor"
    if not (built and isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords):
        raise DeclineError(
            "not-built-from-numbers",
            f"`{name}` is not bound just before the loop to `torch.tensor(<values>)` (optionally `.cumsum(0)`/`.cumsum(-1)`) with no other argument",
        )
    values = value.args[0]
    if isinstance(values, ast.Starred):
        raise DeclineError("not-built-from-numbers", "the values are unpacked into `torch.tensor` (`*values`)")
    # A parameter's kind is read from its name and uses (`lengths` reads as a tensor), and callers
    # pass lists too: the helper decides on those when it runs. A value built here as a tensor
    # would always keep its break: nothing to gain.
    parameter = isinstance(values, ast.Name) and values.id in parameter_names(function)
    if not parameter and ctx.kind(values) in TENSOR_KINDS - MAYBE_PYTHON_KINDS:
        raise DeclineError("values-are-a-tensor", f"`{ctx.excerpt(values, 30)}` is a tensor: its entries are no Python numbers to give instead")
    return values, dim


def _cumsum_dim(call: ast.Call) -> int:
    """The dimension of `.cumsum(0)` / `.cumsum(dim=-1)`: 0 or -1, the same sums of a 1-d list."""
    arguments = list(call.args) + [k.value for k in call.keywords if k.arg == "dim"]
    if len(arguments) == 1 and len(call.args) + len(call.keywords) == 1:
        dim = arguments[0]
        negated = isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub)
        literal = dim.operand if isinstance(dim, ast.UnaryOp) and negated else dim
        if isinstance(literal, ast.Constant) and type(literal.value) is int:
            number = -literal.value if negated else literal.value
            if number in _CUMSUM_DIMS:
                return number
    raise DeclineError("not-built-from-numbers", "the running sum is not `.cumsum(0)` or `.cumsum(-1)` alone")


def _check_read_only_by(function: ast.AST, name: str, loop: ast.For) -> None:
    """`name` appears in the function only where it is bound and in the loop's header: nothing
    else sees a list where the original had a tensor."""
    uses = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    stores = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    scoped = any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in walk(function))
    if scoped or len(stores) != 1 or len(uses) != 1 or not any(u is n for u in uses for n in walk(loop.iter)):
        raise DeclineError("bounds-read-elsewhere", f"`{name}` is bound or read elsewhere in the function, where a list would stand for the tensor")


def _check_only_bounds(ctx: FixContext, loop: ast.For, name: str) -> None:
    """Every read of the loop's name `name` in its body is the start or stop of a slice of a
    tensor, list or tuple, where an int selects what the 0-d tensor selected; it is never bound there."""
    for node in (n for statement in loop.body for n in walk(statement)):
        if isinstance(node, ast.Name) and node.id == name:
            check_read_as_bound(ctx, node, "in the loop")


def check_read_as_bound(ctx: FixContext, node: ast.Name, where: str) -> None:
    """`node` is read as the start or stop of a slice of something known to be a tensor, list or
    tuple (each reads a bound through `__index__`, so an int selects what a 0-d tensor selected)."""
    name = node.id
    bound = ctx.parent(node)
    if not (isinstance(node.ctx, ast.Load) and isinstance(bound, ast.Slice) and (node is bound.lower or node is bound.upper)):
        raise DeclineError("bound-used-otherwise", f"`{name}` is used {where} other than as a slice's start or stop")
    index = ctx.parent(bound)
    subscript = ctx.parent(index) if isinstance(index, ast.Tuple) else index
    indexed = isinstance(subscript, ast.Subscript) and subscript.slice is (index if isinstance(index, ast.Tuple) else bound)
    if not (indexed and isinstance(subscript, ast.Subscript) and ctx.kind(subscript.value) in _SLICED_ALIKE):
        raise DeclineError("sliced-not-a-tensor", f"`{name}` bounds a slice of something not known to be a tensor, list or tuple (its `__getitem__` could tell an int from a tensor)")
