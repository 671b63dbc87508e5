"""A number kept as a 0-d tensor where it indexes a tensor: `x[n]`, `x[:, n]`, `x[n] = v`.

`n = torch.multinomial(w, 1).item()` then `rows.append(x[n])` (ALBEF's hard negatives), or
`full[n] = mask` with `n = torch.randint(0, N, (1,)).item()` (PEFT's BOFT dropout): the Python
int is read off the device only to pick a row. Dynamo cannot keep it a tensor as it is: a 0-d
integer tensor computed in the graph used as an index also breaks (measured on torch 2.13: it is
read as a Python int, `aten._local_scalar_dense`), but a one-element index does not. So the index
becomes `n.reshape(1)`, a gather of one row (`x[n.reshape(1)].squeeze(...)`) or a one-row
`index_put` (`x[n.reshape(1)] = v`; Python's setitem drops the value's leading 1-dims for both,
so the same values broadcast). Same rows, the same gradient (select's backward and index's are
the same scatter), the same IndexError text out of range in eager.

The one difference: `x[n]` with an int is a *view* of `x`, the gather a copy. It is only
observable through a later in-place change of either, or when the view leaves the function. So a
read is accepted only where the row is consumed at once (arithmetic, a call of torch or a tensor
method that does not write, a local list's `append`) and no tensor of the function is changed in
place after it (a view of `x` under another name would carry the change); declined otherwise.
"""

from __future__ import annotations

import ast

from ..analysis.kinds import TENSOR_KINDS
from .aliasing import is_fresh
from .context import FixContext
from .flow import changed_in_place_after, changes_in_place, is_in_place_call, reaching_definition
from .model import DeclineError

_INTEGER_DTYPES = frozenset({"int64", "int32", "int16", "int8", "uint8"})


def index_use(ctx: FixContext, function: ast.AST, use: ast.Name, name: str, value_dtype: tuple) -> tuple[ast.expr, str] | None:
    """The subscript `use` indexes, with its rewritten text, when `use` is one part of a tensor
    subscript's index; None when it is not an index of a tensor (the caller decides then).
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
        raise DeclineError("used-as-number", f"`{name}` indexes {where}, and is not known to hold an integer (a bool would add a dimension)")
    position = next(i for i, part in enumerate(parts) if part is use)
    if any(part is not use and not isinstance(part, ast.Slice) for part in parts):
        # other integers or tensors in the index are advanced indices too: where the gathered
        # dimension lands would depend on them
        raise DeclineError("used-as-number", f"`{name}` indexes {where} beside other indices than slices")
    index = ", ".join(f"{name}.reshape(1)" if part is use else ctx.code(part) for part in parts)
    gathered = f"{ctx.atom(subscript.value)}[{index}]"
    statement = ctx.statement_of(subscript)
    if isinstance(subscript.ctx, ast.Store):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.targets[0] is subscript):
            raise DeclineError("used-as-number", f"`{name}` indexes {where}, which is written other than by `= value`")
        return subscript, gathered
    if isinstance(subscript.ctx, ast.Del):
        return None
    reason = _view_reason(ctx, function, subscript, statement)
    if reason is not None:
        raise DeclineError("used-as-number", f"`{name}` indexes {where}: a gather would copy the row where the original is a view of it, and {reason}")
    return subscript, f"{gathered}.squeeze({position})"


def _view_reason(ctx: FixContext, function: ast.AST, row: ast.expr, statement: ast.stmt | None) -> str | None:
    """Why the difference between the view `row` and a copy could be seen, or None."""
    parent = ctx.parent(row)
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        pass
    elif isinstance(parent, ast.Attribute) and parent.value is row:
        call = ctx.parent(parent)
        if not (isinstance(call, ast.Call) and call.func is parent) or is_in_place_call(call):
            return f"`{ctx.excerpt(parent, 40)}` may change or keep it"
    elif isinstance(parent, ast.Call) and any(a is row for a in parent.args):
        if not _consumes(ctx, function, parent):
            return f"`{ctx.excerpt(parent.func, 40)}` may keep it"
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


def _consumes(ctx: FixContext, function: ast.AST, call: ast.Call) -> bool:
    """A call that reads its tensor arguments and keeps none: a torch function or a tensor method
    that does not write in place, or `rows.append(...)` into a local list that is not returned."""
    name = ctx.qualname(call.func) or ""
    if name.startswith("torch.") and not name.endswith("_") and not any(k.arg == "out" for k in call.keywords):
        return True
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name):
        return not _list_leaves(ctx, function, func.value.id)
    return isinstance(func, ast.Attribute) and ctx.kind(func.value) in TENSOR_KINDS and not is_in_place_call(call)


def _list_leaves(ctx: FixContext, function: ast.AST, listed: str) -> bool:
    """Whether a `return`/`yield` may hand out the list `listed` (not a new tensor bound to the
    name in its place, as `rows = torch.stack(rows)` does)."""
    for node in ast.walk(function):
        if not (isinstance(node, (ast.Return, ast.Yield)) and node.value is not None):
            continue
        reads = [n for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id == listed]
        # `return torch.stack(rows) * w`: stacked into a new tensor, the list itself stays here
        if all(_torch_call_argument(ctx, read) for read in reads):
            continue
        statement = ctx.statement_of(node)
        value = reaching_definition(ctx, statement, listed) if statement is not None else None
        if value is None or not is_fresh(ctx, value):
            return True
    return False


def _torch_call_argument(ctx: FixContext, node: ast.expr) -> bool:
    call = ctx.parent(node)
    return isinstance(call, ast.Call) and any(a is node for a in call.args) and (ctx.qualname(call.func) or "").startswith("torch.")


def _tensor_names(function: ast.AST) -> set[str]:
    """Every name something is changed in place through, anywhere in the function."""
    names: set[str] = set()
    for node in ast.walk(function):
        for candidate in (n.id for n in ast.walk(node) if isinstance(n, ast.Name)) if isinstance(node, (ast.AugAssign, ast.Assign, ast.Call)) else ():
            if changes_in_place(node, candidate):
                names.add(candidate)
    return names


def _fresh_local(ctx: FixContext, function: ast.AST, name: str) -> bool:
    """`full = torch.zeros(...)`: every binding of `name` in the function is a new tensor, so no
    view of another tensor is changed through it."""
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}:
        return False
    stores = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    bindings = [
        n for n in ast.walk(function) if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name
    ]
    return bool(stores) and len(stores) == len(bindings) and all(is_fresh(ctx, b.value) for b in bindings)
