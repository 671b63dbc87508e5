"""Where names are bound and read, around one statement of a function (conservative, syntactic).

`defined_before` must not say yes unless every path to the statement binds the name;
`read_after` must not say no unless no later statement (or, inside a loop, no statement of the
loop) can read it. Both err on the side that makes a fixer decline.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

from ..analysis.symbols import bound_names
from ..astwalk import walk
from .aliasing import is_fresh
from .context import FixContext
from .py_types import nodes_in_scope

_BLOCK_FIELDS = ("body", "orelse", "finalbody")


def enclosing_blocks(ctx: FixContext, function: ast.AST, stmt: ast.stmt) -> Iterable[tuple[ast.AST, list[ast.stmt], int]]:
    """For `stmt` and each statement around it up to `function`: the statement holding it, the
    block it sits in and its index there (innermost first)."""
    current: ast.AST = stmt
    while current is not function:
        parent = ctx.parent(current)
        if parent is None:
            return
        for field_name in _BLOCK_FIELDS:
            block = getattr(parent, field_name, None)
            index = next((i for i, s in enumerate(block) if s is current), None) if isinstance(block, list) else None
            if index is not None:
                yield parent, block, index  # type: ignore[misc]
        current = parent


def binds(stmt: ast.stmt) -> set[str]:
    """Names a statement binds on every path through it (compound statements: none, to be safe,
    except an if/else that binds the name in both branches)."""
    if isinstance(stmt, ast.Assign):
        return {name for target in stmt.targets for name in bound_names(target)}
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and (not isinstance(stmt, ast.AnnAssign) or stmt.value is not None):
        return set(bound_names(stmt.target))
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in stmt.names}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, ast.If) and stmt.orelse:
        return _block_binds(stmt.body) & _block_binds(stmt.orelse)
    if isinstance(stmt, ast.With):
        names = {n for item in stmt.items if item.optional_vars is not None for n in bound_names(item.optional_vars)}
        return names | _block_binds(stmt.body)
    return set()


def _block_binds(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in body:
        names |= binds(stmt)
    return names


def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    args = function.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return names


def _containing_block(ctx: FixContext, stmt: ast.stmt) -> tuple[ast.AST, list[ast.stmt]] | None:
    parent = ctx.parent(stmt)
    if parent is None:
        return None
    for field in _BLOCK_FIELDS:
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            return parent, block
    for handler in getattr(parent, "handlers", ()):
        if any(s is stmt for s in handler.body):
            return handler, handler.body
    return None


def rest_of_block(ctx: FixContext, stmt: ast.stmt) -> list[ast.stmt]:
    """`stmt` and the statements after it in its block (just `stmt` outside any block)."""
    found = _containing_block(ctx, stmt)
    if found is None:
        return [stmt]
    block = found[1]
    return block[next(i for i, s in enumerate(block) if s is stmt) :]


def defined_before(ctx: FixContext, stmt: ast.stmt, name: str) -> bool:
    """Whether `name` is bound on every path that reaches `stmt` (inside its function)."""
    function = ctx.function_of(stmt)
    for parent, block, index in _outward(ctx, stmt):
        if any(name in binds(earlier) for earlier in block[:index]):
            return True
        if parent is function:
            return name in parameter_names(function)  # type: ignore[arg-type]
        if isinstance(parent, (ast.For, ast.AsyncFor)) and name in set(bound_names(parent.target)):
            return True
    return False


def _outward(ctx: FixContext, stmt: ast.stmt) -> Iterator[tuple[ast.AST, list[ast.stmt], int]]:
    """`stmt`'s block and each block around it, innermost first: (what holds the block - a
    statement, an except handler or the function -, the block, the index in it of `stmt` or of the
    statement holding `stmt`). Ends after a block held by something other than a statement or an
    except handler, or early where a block cannot be found: the callers then give their cautious
    answer."""
    current: ast.stmt = stmt
    while True:
        found = _containing_block(ctx, current)
        if found is None:
            return
        parent, block = found
        yield parent, block, next(i for i, s in enumerate(block) if s is current)
        if isinstance(parent, ast.ExceptHandler):
            parent = ctx.parent(parent)  # type: ignore[assignment]
        if not isinstance(parent, ast.stmt):
            return
        current = parent


def _reads(nodes: Iterable[ast.AST], name: str) -> bool:
    """Whether `nodes` may read `name`: a load, `del name` (it fails where the name is unbound), an
    augmented assignment (`name += 1` reads first), or a closure that mentions it."""
    for root in nodes:
        for node in walk(root):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Load, ast.Del)):
                return True
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return True
            if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef)) and node is not root:
                # a closure may read it whenever it is called
                if any(isinstance(n, ast.Name) and n.id == name for n in walk(node)):
                    return True
    return False


_READ, _KILLED, _OPEN = "read", "killed", "open"
_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Raise)


def _first_use(statements: list[ast.stmt], name: str) -> str:
    """What running `statements` in order does first with `name`: reads the value it had before
    (`_READ`), assigns it on every path before any read and with no jump out on the way
    (`_KILLED`), or neither (`_OPEN`). Cautious: a read anywhere in a compound statement other
    than an `if` counts as a read, and only plain assignments and `if`s whose arms both assign kill."""
    jumped = False
    for statement in statements:
        if isinstance(statement, ast.If):
            if _reads([statement.test], name):
                return _READ
            arms = (_first_use(statement.body, name), _first_use(statement.orelse, name))
            if _READ in arms:
                return _READ
            if arms == (_KILLED, _KILLED) and not jumped:
                return _KILLED
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if _reads([statement.value, *targets], name):
                return _READ
            if not jumped and any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return _KILLED
        elif _reads([statement], name):
            return _READ
        jumped = jumped or any(isinstance(n, _JUMPS) for n in nodes_in_scope([statement]))
    return _OPEN


def _escapes(function: ast.AST, name: str) -> bool:
    """`name` is declared global or nonlocal in `function`, or a function or lambda defined in it
    mentions it: reads can happen anywhere then."""
    for node in walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not function:
            if any(isinstance(n, ast.Name) and n.id == name for n in walk(node)):
                return True
    return False


def read_after(ctx: FixContext, stmt: ast.stmt, name: str) -> bool:
    """Whether the value `name` holds when `stmt` has run may be read (by later statements, or on
    the next loop iteration). A value every path assigns again before reading it is not: a
    temporary that a loop's body assigns and then reads (kornia's `_erosion_to_fill` in
    `if to_norm.any():`) is read on the next iteration only after it is assigned again."""
    function = ctx.function_of(stmt)
    if function is None or ctx.remember(("escapes", id(function), name), lambda: _escapes(function, name)):
        return True
    outward = list(_outward(ctx, stmt))
    # Inside a `try` or `with`, an exception (a `raise`, or the statement that would assign the name
    # again) may resume after it with the value still there: only the cautious any-read answer holds.
    guarded = any(isinstance(parent, (ast.Try, ast.TryStar, ast.ExceptHandler, ast.With, ast.AsyncWith)) for parent, _, _ in outward)
    cautious = guarded  # also once a `break`/`continue` met on the way may skip an outer assignment
    for parent, block, index in outward:
        rest = block[index + 1 :]
        use = (_READ if _reads(rest, name) else _OPEN) if cautious else _first_use(rest, name)
        if use != _OPEN:
            return use == _READ
        cautious = cautious or any(isinstance(n, _JUMPS) for n in nodes_in_scope(rest))
        if guarded and isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.ExceptHandler)):
            owner = ctx.parent(parent) if isinstance(parent, ast.ExceptHandler) else parent
            if _reads([owner] if owner is not None else [], name):
                return True  # its other blocks (handlers, else, finally), or the loop again
            continue
        if isinstance(parent, (ast.Try, ast.TryStar)) and block is parent.body:
            use = _first_use(parent.orelse, name)  # a try's else runs after its body
            if use != _OPEN:
                return use == _READ
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(parent, ast.While) and _reads([parent.test], name):
                return True
            if _reads(parent.orelse, name) or (block is parent.body and _first_use(parent.body, name) == _READ):
                return True  # read on the next iteration before it is assigned again, or by the loop's else
            if block is not parent.body and _reads([parent], name):
                return True
        if parent is function:
            return False
    return True


def reaching_definition(ctx: FixContext, stmt: ast.stmt, name: str) -> ast.expr | None:
    """The value of the last `name = value` before `stmt` on every path to it, if that is the
    nearest binding of `name` (any other binding, or one inside a nested block, gives None)."""
    return _reaching(ctx, stmt, name, lambda target: isinstance(target, ast.Name))


def reaching_unpacking(ctx: FixContext, stmt: ast.stmt, name: str) -> ast.expr | None:
    """As reaching_definition, for a name bound by unpacking names: the whole value of the last
    `a, name = value` (`a, b = t.tolist()`)."""
    return _reaching(ctx, stmt, name, lambda target: isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts))


def _reaching(ctx: FixContext, stmt: ast.stmt, name: str, form: Callable[[ast.expr], bool]) -> ast.expr | None:
    """The value of the nearest binding of `name` before `stmt` on every path to it, where that
    binding is a one-target assignment whose target has `form` (a plain name, unpacked names)."""
    function = ctx.function_of(stmt)
    for parent, block, index in _outward(ctx, stmt):
        for earlier in reversed(block[:index]):
            if isinstance(earlier, ast.Assign) and len(earlier.targets) == 1 and isinstance(earlier.targets[0], (ast.Name, ast.Tuple, ast.List)):
                if name in _assigned_anywhere(earlier.targets[0]):
                    return earlier.value if form(earlier.targets[0]) else None
                if isinstance(earlier.targets[0], ast.Name):
                    continue
            if name in _assigned_anywhere(earlier):
                return None  # bound some other way, or only on some paths
        if parent is function or not isinstance(parent, (ast.stmt, ast.ExceptHandler)):
            return None
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)) and name in _assigned_anywhere(parent):
            return None  # the loop may change it between iterations
    return None


def _assigned_anywhere(stmt: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def reachable_after(ctx: FixContext, function: ast.AST, check: ast.stmt) -> list[ast.stmt]:
    """The statements that can run after `check`: those after it in its block and in each
    enclosing block up to the function, and the whole body of any loop around it."""
    found: list[ast.stmt] = []
    for parent, block, index in enclosing_blocks(ctx, function, check):
        found += block[index + 1 :]
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)) and block is parent.body:
            found += block[: index + 1] + parent.orelse  # the next iteration runs them again
    return found


def is_in_place_call(node: ast.AST) -> bool:
    """`t.mul_(2)`, `t.clamp_(...)`: a method call that changes its receiver (not `_private`/`__dunder__`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") and not node.func.attr.startswith("_")


def changes_in_place(node: ast.AST, name: str) -> bool:
    """`name += ...` (in place on a tensor), `name.op_(...)` (also through a view of it,
    `name.view(-1).add_(1)`), `name[...] = ...`, `name.data = ...`, `f(..., out=name)`."""
    if isinstance(node, ast.AugAssign):
        target = node.target
        return (isinstance(target, ast.Name) and target.id == name) or (isinstance(target, ast.Subscript) and is_name(target.value, name))
    if isinstance(node, ast.Assign):
        return any(isinstance(t, (ast.Subscript, ast.Attribute)) and _base_name(t) == name for t in node.targets)
    if isinstance(node, ast.Call):
        func = node.func
        if is_in_place_call(node):
            assert isinstance(func, ast.Attribute)
            if _base_name(func.value) == name:
                return True
            # `torch.sigmoid_(t)`, `torch.Tensor.sub_(t, 5)`: a function that changes its first argument
            if node.args and _base_name(node.args[0]) == name and _base_name(func.value) in ("torch", "Tensor"):
                return True
        return any(k.arg == "out" and is_name(k.value, name) for k in node.keywords)
    return False


def _with_sources(ctx: FixContext, function: ast.AST, roots: list[str]) -> list[str]:
    """`roots` and the names any of them may share a tensor with through an assignment in
    `function` (`mm = m.bool()` is `m` itself when `m` is boolean, `v = m.view(-1)` a view of it):
    a change to those changes the mask too. Results of arithmetic and new-tensor calls share
    nothing (`aliasing.is_fresh`)."""
    names = list(roots)
    for name in names:  # grows while it is read
        for node in walk(function):
            if isinstance(node, ast.Assign) and any(is_name(t, name) for t in node.targets) and not is_fresh(ctx, node.value):
                for sub in walk(node.value):
                    source = _base_name(sub) if isinstance(sub, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else None
                    if source is not None and source not in names:
                        names.append(source)
    return names


def mask_reads_changed(ctx: FixContext, function: ast.AST, nodes: Iterable[ast.AST], binding: ast.stmt, roots: list[str]) -> tuple[str, ast.AST | None] | None:
    """Whether a name a mask reads (`roots`) may change from `binding` on, among `nodes`: the name
    and None where it is stored again (on the binding's line too) or changed in place, the name
    and the place where it may reach code that could change it unseen (`mask_escape`); None where
    it cannot."""
    nodes = list(nodes)
    for root in _with_sources(ctx, function, roots):
        for node in nodes:
            stored = isinstance(node, ast.Name) and node.id == root and isinstance(node.ctx, (ast.Store, ast.Del)) and node.lineno >= binding.lineno
            if stored or (getattr(node, "lineno", 0) > binding.lineno and changes_in_place(node, root)):
                return root, None
        escape = mask_escape(ctx, function, root)
        if escape is not None:
            return root, escape
    return None


def _base_name(node: ast.AST) -> str | None:
    """The name a chain of attributes, subscripts and method calls starts from (`t` of
    `t.view(-1)[0].data`)."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return node.id if isinstance(node, ast.Name) else None


def mask_escape(ctx: FixContext, function: ast.AST, name: str) -> ast.AST | None:
    """Where the tensor `name` may reach code that could change it unseen, anywhere in `function`:
    bound to another name as itself or a view (`t = m`, `t = m.view(-1)`: a change through `t`
    changes `m`), read by a nested function or lambda, or passed to a call other than torch's
    own functions and builtins (a helper may change it in place). None where it reaches none."""
    for node in walk(function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not function:
            if any(isinstance(n, ast.Name) and n.id == name for n in walk(node)):
                return node
        if isinstance(node, ast.Assign) and _base_name(node.value) == name and not is_fresh(ctx, node.value):
            if all(isinstance(t, ast.Name) and t.id.startswith("_graphmend_") for t in node.targets):
                continue  # a fix's own name for the mask (mask_hoist.py): nothing changes it
            if not (isinstance(node.value, ast.Subscript) and not isinstance(node.value.value, (ast.Call, ast.Attribute))):
                return node  # `t = m` or a view; `x[m]`-style reads of `m` itself are selections, not aliases
        if isinstance(node, ast.Call) and any(_base_name(a) == name and isinstance(a, ast.Name) for a in [*node.args, *(k.value for k in node.keywords)]):
            callee = ctx.qualname(node.func) or ""
            if not callee.startswith(("torch.", "builtins.")) and not _tensor_method(node.func):
                return node
    return None


def _tensor_method(func: ast.expr) -> bool:
    """`<expr>.<method>` other than on `self` (a tensor's method reads its arguments only)."""
    return isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))


def is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def changed_in_place_after(ctx: FixContext, function: ast.AST, stmt: ast.stmt, name: str, rewritten: ast.AST | None = None) -> ast.AST | None:
    """The first in-place change to the tensor `name` that can run after `stmt`, if any. A rewrite
    that rebinds `name` to a new tensor where the original kept the old object must not let such
    a change miss the object it changed before (the caller's tensor, say).

    A later statement of an enclosing block that rebinds `name` to a new tensor (`preds = preds >
    t`) ends the search: every path from `stmt` passes it, and changes after it reach that new
    tensor in the original and in the rewrite alike. Not across a `break`/`continue` met on the way
    (at any level: it may skip the rebinding), nor inside a `try` (a handler may run instead). A
    loop's next iteration is searched from the start of its body up to such a rebinding. Changes
    inside `rewritten` (the statement the rewrite replaces, met again on the next iteration) are
    not counted: the rewrite no longer makes them in place."""

    def changes(node: ast.AST) -> bool:
        return changes_in_place(node, name) and not (rewritten is not None and ctx.contains(rewritten, node))

    jumps = False  # a `break`/`continue` on the way may skip the rebinding
    in_try = False
    for parent, block, index in enclosing_blocks(ctx, function, stmt):
        following = list(block[index + 1 :])
        if isinstance(parent, (ast.Try, ast.TryStar)):
            in_try = True  # the handlers, `else` and `finally` may run after `stmt` too
            following += [s for handler in parent.handlers for s in handler.body if s not in block]
            following += [s for s in parent.orelse + parent.finalbody if s not in block]
        for statement in following:
            for node in walk(statement):
                if changes(node):
                    return node
                jumps = jumps or isinstance(node, (ast.Break, ast.Continue))
            if not (jumps or in_try) and _rebinds_to_new_tensor(ctx, statement, name):
                return None
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)) and block is parent.body:
            # The next iteration runs the body again from its start, up to a statement of it that
            # rebinds `name` to a new tensor (kornia's `erosion = dilation - 0.5` before
            # `erosion[erosion < 0] = 0`): changes after that reach the new tensor in both.
            for statement in block[: index + 1]:
                for node in walk(statement):
                    if changes(node):
                        return node
                if not in_try and _rebinds_to_new_tensor(ctx, statement, name):
                    break
            again: list[ast.AST] = [*parent.orelse, *([parent.test] if isinstance(parent, ast.While) else [])]
            for part in again:
                for node in walk(part):
                    if changes(node):
                        return node
    return None


def _rebinds_to_new_tensor(ctx: FixContext, statement: ast.stmt, name: str) -> bool:
    """`name = <a new tensor>` (arithmetic, a comparison, `clone()`...), never the old object."""
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and is_name(statement.targets[0], name)
        and is_fresh(ctx, statement.value)
    )
