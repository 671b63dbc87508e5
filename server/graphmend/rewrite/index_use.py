"""A number kept as a 0-d tensor where it indexes a tensor: `x[n]`, `x[n, 1:]`, `x[n] = v`.

`n = torch.multinomial(w, 1).item()` then `rows.append(x[n])` (ALBEF's hard negatives), or
`full[n] = mask` with `n = torch.randint(0, N, (1,)).item()` (PEFT's BOFT dropout): the Python
int is read off the device only to pick a row. Dynamo cannot keep it a tensor as it is: a 0-d
integer tensor computed in the graph used as an index also breaks (measured on torch 2.13: it is
read as a Python int, `aten._local_scalar_dense`), but a one-element index does not. So the index
becomes `n.reshape(1).to(x.device)`: a gather of one row (`x[...].squeeze(0)`) or a one-row
`index_put` (`x[...] = v.to(x.device, x.dtype)`: setitem converts the value, index_put does not,
and both drop a leading 1-dim of it). Only as the first index, before slices: elsewhere the
gathered dimension's place and setitem's broadcasting differ. Same rows, the same gradient
(select's backward and index's are the same scatter), the same IndexError text out of range in
eager; int64 and int32 only (a uint8 index is a mask).

The one difference: `x[n]` with an int is a *view* of `x`, the gather a copy. It is only
observable through a later in-place change of either, or when the view leaves the function. So a
read is accepted only where the row is consumed at once by something that makes a new tensor of
it (arithmetic, a reduction, `torch.stack`) or appended to a local list that is only stacked, and
no tensor of the function is changed in place after it (a view of `x` under another name would
carry the change); a write only into a tensor made in the function. A read keeps the int form for
a value that is no tensor at run time (`isinstance` is settled while tracing).
"""

from __future__ import annotations

import ast

from ..analysis.kinds import TENSOR_KINDS
from ..astwalk import walk
from .aliasing import is_fresh
from .context import FixContext
from .flow import changed_in_place_after, changes_in_place, parameter_names, reaching_definition
from .model import DeclineError

# Index dtypes: a uint8 tensor indexes as a mask, int8/int16 ones are refused.
_INTEGER_DTYPES = frozenset({"int64", "int32"})


def index_use(ctx: FixContext, function: ast.AST, use: ast.Name, name: str, value_dtype: tuple) -> list[tuple[ast.expr, str]] | None:
    """The subscript `use` indexes, with its rewritten text (and a written value's), when `use` is
    the first index of a tensor subscript; None when it is not an index of a tensor (the caller
    decides then).
    Raises DeclineError where it is one but the rewrite would not keep the meaning."""
    subscript = ctx.parent(use)
    if isinstance(subscript, ast.Tuple):
        subscript = ctx.parent(subscript)
    if not isinstance(subscript, ast.Subscript) or ctx.kind(subscript.value) not in TENSOR_KINDS:
        return None
    parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    if not any(part is use for part in parts):
        return None
    where = f"`{ctx.excerpt(subscript, 40)}`"
    if not (value_dtype[0] == "const" and value_dtype[1] in _INTEGER_DTYPES):
        raise DeclineError("used-as-number", f"`{name}` indexes {where}, and is not known to hold an int64 or int32")
    if parts[0] is not use or any(not isinstance(part, ast.Slice) for part in parts[1:]):
        # elsewhere, the gathered dimension's place, setitem's broadcasting and the out-of-range
        # message would all differ
        raise DeclineError("used-as-number", f"`{name}` indexes {where} other than as its first index, before slices only")
    tensor = subscript.value
    if not _is_reference(tensor):
        raise DeclineError("used-as-number", f"`{name}` indexes {where}, whose tensor is not a name to read again")
    torch = ctx.torch_name()
    held = ctx.code(tensor)
    index = ", ".join(f"{name}.reshape(1).to({held}.device)" if part is use else ctx.code(part) for part in parts)
    gathered = f"{ctx.atom(tensor)}[{index}]"
    statement = ctx.statement_of(subscript)
    if isinstance(subscript.ctx, ast.Store):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.targets[0] is subscript):
            raise DeclineError("used-as-number", f"`{name}` indexes {where}, which is written other than by `= value`")
        if not (isinstance(tensor, ast.Name) and _fresh_local(ctx, function, tensor.id)):
            raise DeclineError("used-as-number", f"`{name}` indexes {where}, written into a tensor not made in the function (a list would take the write otherwise)")
        value = statement.value
        if _python_number(ctx, value):
            return [(subscript, gathered)]
        if ctx.kind(value) not in TENSOR_KINDS:
            raise DeclineError("used-as-number", f"`{name}` indexes {where}, written with `{ctx.excerpt(value, 30)}` of unknown type")
        # setitem converts the value to the target's dtype and device; index_put does not
        return [(subscript, gathered), (value, f"{ctx.atom(value)}.to({held}.device, {held}.dtype)")]
    if isinstance(subscript.ctx, ast.Del):
        return None
    reason = _view_reason(ctx, function, subscript, statement)
    if reason is not None:
        raise DeclineError("used-as-number", f"`{name}` indexes {where}: a gather would copy the row where the original is a view of it, and {reason}")
    # a list that the analysis took for a tensor (a backbone's features) still takes the int
    return [(subscript, f"({gathered}.squeeze(0) if isinstance({held}, {torch}.Tensor) else {ctx.code(subscript)})")]


def _is_reference(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _python_number(ctx: FixContext, value: ast.expr) -> bool:
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) and type(value.value) in (int, float, bool)


def _view_reason(ctx: FixContext, function: ast.AST, row: ast.expr, statement: ast.stmt | None) -> str | None:
    """Why the difference between the view `row` and a copy could be seen, or None: the row must
    be consumed at once by something that makes a new tensor of it (arithmetic, `torch.stack`, a
    reduction), or appended to a local list that is only stacked, and no tensor of the function
    may be changed in place afterwards (a view of the indexed tensor under another name)."""
    parent = ctx.parent(row)
    if isinstance(parent, (ast.BinOp, ast.Compare)) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.Invert))):
        pass
    elif isinstance(parent, ast.Attribute) and parent.value is row:
        call = ctx.parent(parent)
        if not (isinstance(call, ast.Call) and call.func is parent and _makes_new_tensor(ctx, call)):
            return f"`{ctx.excerpt(parent, 40)}` may change it or hand it on"
    elif isinstance(parent, ast.Call) and any(a is row for a in parent.args):
        func = parent.func
        listed = func.value.id if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name) else None
        if listed is not None and not _only_stacked(ctx, function, listed):
            return f"the list `{listed}` it is appended to may be kept or handed on"
        if listed is None and not _makes_new_tensor(ctx, parent):
            return f"`{ctx.excerpt(func, 40)}` may change it or hand it on"
    else:
        return "the row is kept, returned or changed where it is used"
    if statement is None:
        return "it is not in a statement"
    root = row.value if isinstance(row, ast.Subscript) else row
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    for name in sorted(_tensor_names(function)):
        if changed_in_place_after(ctx, function, statement, name) is None:
            continue
        # a new tensor of the function's own is no view of the indexed one (unless it is it)
        if not (isinstance(root, ast.Name) and root.id != name and _fresh_local(ctx, function, name)):
            return f"`{name}` is changed in place afterwards"
    return None


def _makes_new_tensor(ctx: FixContext, call: ast.Call) -> bool:
    """A call that returns a new tensor and writes into none (`torch.stack`, `.sum()`, not
    `F.relu(x, inplace=True)`, `out=`, `.unsqueeze(0)`, a view)."""
    if any(k.arg in ("out", "inplace") for k in call.keywords):
        return False
    return is_fresh(ctx, call)


def _only_stacked(ctx: FixContext, function: ast.AST, listed: str) -> bool:
    """`rows = []`, `rows.append(...)`, then `torch.stack(rows)`: a local list bound only to list
    displays, read only to append to it, to take its length, or by a call that makes a new tensor
    of it (where the name is read after `rows = torch.stack(rows)`, it holds that new tensor)."""
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and listed in parameter_names(function):
        return False
    for node in walk(function):
        if not (isinstance(node, ast.Name) and node.id == listed):
            continue
        parent = ctx.parent(node)
        if isinstance(node.ctx, ast.Store):
            statement = ctx.statement_of(node)
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.targets[0] is node):
                return False
            if not (isinstance(statement.value, ast.List) or is_fresh(ctx, statement.value)):
                return False
            continue
        if isinstance(parent, ast.Attribute) and parent.attr == "append" and isinstance(ctx.parent(parent), ast.Call):
            continue
        if isinstance(parent, ast.Call) and any(a is node for a in parent.args) and (ctx.qualname(parent.func) == "builtins.len" or _makes_new_tensor(ctx, parent)):
            continue
        statement = ctx.statement_of(node)
        held = reaching_definition(ctx, statement, listed) if statement is not None else None
        if held is None or not is_fresh(ctx, held):
            return False
    return True


def _tensor_names(function: ast.AST) -> set[str]:
    """Every name something is changed in place through, anywhere in the function."""
    names = {n.id for n in walk(function) if isinstance(n, ast.Name)}
    changes = [n for n in walk(function) if isinstance(n, (ast.AugAssign, ast.Assign, ast.Call))]
    return {name for name in names if any(changes_in_place(node, name) for node in changes)}


def _fresh_local(ctx: FixContext, function: ast.AST, name: str) -> bool:
    """`full = torch.zeros(...)`: every binding of `name` in the function is a new tensor, so no
    view of another tensor is changed through it."""
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in parameter_names(function):
        return False
    stores = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    bindings = [
        n for n in walk(function) if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name
    ]
    return bool(stores) and len(stores) == len(bindings) and all(is_fresh(ctx, b.value) for b in bindings)
