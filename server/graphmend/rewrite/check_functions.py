"""Functions that only check or report: a call of one may run as an ordered op as a whole.

`test_for_nans(x, "unet")` (stable-diffusion-webui) reads `.item()` of a tensor, returns early when
all is well and otherwise builds a message and raises. The break is inside the function, but the
fix belongs at its call: moved into a custom op with an ordered effect (fixers/ordered.py), the
call runs at run time in program order with the same arguments, so the same exception with the
same message leaves the compiled code, and nothing else changes - provided the function returns
nothing and changes nothing the caller could see. This module decides that, conservatively and
syntactically, for a module-level function of the file: every `return` returns None; it binds only
its own local names; it calls only builtins that read, torch functions and tensor methods that do
not write in place, prints, logs and warnings, and other such functions of the file.
"""

from __future__ import annotations

import ast

from ..analysis.kinds import TENSOR_KINDS
from ..astwalk import walk
from .context import FixContext
from .effects import CALLER_KEYWORDS, EFFECT_FUNCTIONS, LOGGER_METHODS, MUTATING_METHODS
from .model import DeclineError
from .ordered_site import READING_BUILTINS
from .purity import RANDOM

# what moved code may call on passed values (ordered_site.py), and builtins that read nothing else
_READING_BUILTINS = READING_BUILTINS | {
    "issubclass", "range", "enumerate", "zip", "set", "dict", "frozenset", "print", "callable", "id", "hash", "divmod", "pow",
}  # fmt: skip
_READING_MODULES = ("math.", "operator.", "numbers.")
# Methods of str, dict, list and tuple that only read.
_READING_METHODS = frozenset(
    {
        "format", "join", "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper",
        "replace", "get", "keys", "values", "items", "count", "index", "find", "title", "capitalize",
    }
)  # fmt: skip
# torch functions and tensor methods with effects beyond their result: inside the op they would
# happen in another order relative to the graph's own random numbers, saves and collectives.
_GLOBAL_STATE_FUNCTIONS = frozenset({"save", "load", "manual_seed", "seed", "initial_seed", "set_rng_state", "get_rng_state", "backward"})
_SIDE_EFFECT_METHODS = frozenset({"backward", "register_hook", "retain_grad", "record_stream"})
# torch.distributed queries that only read the process group's setup (`log_rank_zero`'s rank test).
_PROCESS_QUERIES = frozenset(
    {"torch.distributed.get_rank", "torch.distributed.get_world_size", "torch.distributed.is_available", "torch.distributed.is_initialized"}
)
# Decorators after which a call still runs the function's body the same way, or not at all: a
# cache of a function that returns None (`log_once`) decides the same at run time in the op.
_CACHES = frozenset({"functools.lru_cache", "functools.cache"})
_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.For, ast.Raise, ast.Assert, ast.Return, ast.Pass, ast.With)
# Context managers that only set autograd's mode for their block: inside the op the block runs
# the same way (the op's own call already runs without recording a graph).
_GRAD_MODES = frozenset({"torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled", "torch.autograd.no_grad"})


def is_check_like(function: ast.AST) -> bool:
    """The function raises, asserts or reports somewhere: worth explaining why it cannot move."""
    return any(isinstance(n, (ast.Raise, ast.Assert)) for n in walk(function))


def check_function_reason(ctx: FixContext, function: ast.AST, depth: int = 0) -> str | None:
    """None when calling `function` (a module-level def of this file) only checks or reports;
    otherwise why not, in words for a decline message."""
    if not isinstance(function, ast.FunctionDef) or function not in ctx.tree.body:
        return "it is not a plain module-level function of this file"
    if any(not _is_cache(ctx, d) for d in function.decorator_list):
        return f"`{function.name}` is decorated (the decorator may change what a call does)"
    decorators = {id(n) for d in function.decorator_list for n in walk(d)}  # applied once, at definition
    for node in walk(function):
        if id(node) in decorators:
            continue
        if node is not function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return f"`{function.name}` defines a function or class inside"
        if isinstance(node, ast.With) and _grad_mode_only(ctx, node):
            continue  # `with torch.no_grad():` (botorch's input checks): the same inside the op
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.Try, ast.With, ast.While)):
            return f"`{function.name}` uses `{type(node).__name__.lower()}`"
        if isinstance(node, ast.stmt) and not isinstance(node, _STATEMENTS) and node is not function:
            return f"`{function.name}` has a `{type(node).__name__}` statement"
        if isinstance(node, ast.Return) and not (node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)):
            return f"`{function.name}` returns a value (`{ctx.excerpt(node, 40)}`)"
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return f"`{function.name}` changes state outside itself (`{ctx.excerpt(node, 40)}`)"
        if isinstance(node, ast.AugAssign) and not _rebinds_a_new_value(function, node):
            return f"`{function.name}` updates `{ctx.code(node.target)}` in place, which may be an argument"
        if isinstance(node, ast.Call) and not _raised(ctx, node):
            reason = _call_reason(ctx, function, node, depth)
            if reason is not None:
                return reason
    return None


def _grad_mode_only(ctx: FixContext, statement: ast.With) -> bool:
    """`with torch.no_grad():` (and the other grad modes), binding nothing."""
    return all(
        item.optional_vars is None and isinstance(item.context_expr, ast.Call) and ctx.qualname(item.context_expr.func) in _GRAD_MODES
        for item in statement.items
    )


def _is_cache(ctx: FixContext, decorator: ast.expr) -> bool:
    """`@lru_cache`, `@lru_cache(None)`, `@functools.cache`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ctx.qualname(target) in _CACHES


def _caller_frame_reason(ctx: FixContext, call: ast.Call, depth: int) -> str | None:
    """A report that names a caller's frame (`stacklevel=k`, `stack_info`, `exc_info`): it keeps
    its meaning only where that frame is still inside the moved call. The moved call is depth 0,
    so `stacklevel=k` at depth `d` names a frame of the moved code when `k <= d + 1` (torchtune's
    `log_once` -> `log_rank_zero` -> `logger.log(stacklevel=2)` names `log_once`); past it, the
    record or warning would name the op's own function instead of the compiled caller."""
    for keyword in call.keywords:
        if keyword.arg is None:
            return f"`{ctx.excerpt(call, 40)}` passes `**` keywords, which may name a caller's frame"
        if keyword.arg == "stacklevel" or (keyword.arg in CALLER_KEYWORDS and not _false_literal(keyword.value)):
            value = keyword.value
            if keyword.arg != "stacklevel" or not (isinstance(value, ast.Constant) and type(value.value) is int):
                return f"`{ctx.excerpt(call, 40)}` reads the caller's frame or the exception being handled (`{keyword.arg}=`)"
            # A warning one frame further out names the function the moved call now sits in: the
            # module-level function GraphMend writes for it, in the same module (same file, module
            # name and warning registry), with a line of its own per moved call, where the original
            # named the compiled function's line of that call. A log record would also carry that
            # function's name (`funcName`), which differs.
            reach = depth + 2 if ctx.qualname(call.func) == "warnings.warn" else depth + 1
            if value.value > reach:
                return f"`{ctx.excerpt(call, 40)}` names a caller outside the moved call (`stacklevel={value.value}`), which would be the op"
    if ctx.qualname(call.func) == "warnings.warn" and len(call.args) > 2:
        return f"`{ctx.excerpt(call, 40)}` passes its stacklevel by position"
    return None


def _false_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, None)


def _raised(ctx: FixContext, call: ast.Call) -> bool:
    """`raise E(message)`: the exception's constructor, whose instance only the raise sees."""
    parent = ctx.parent(call)
    return isinstance(parent, ast.Raise) and parent.exc is call


def _rebinds_a_new_value(function: ast.FunctionDef, update: ast.AugAssign) -> bool:
    """`message += "..."` where `message` was first bound to a string or number literal: the
    update makes a new immutable value, nothing the caller holds."""
    if not isinstance(update.target, ast.Name):
        return False
    name = update.target.id
    first = next(
        (n for n in walk(function) if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)),
        None,
    )
    return first is not None and isinstance(first.value, (ast.Constant, ast.JoinedStr)) and first.lineno < update.lineno


def _call_reason(ctx: FixContext, function: ast.FunctionDef, call: ast.Call, depth: int) -> str | None:
    name = ctx.qualname(call.func) or ""
    func = call.func
    if name in EFFECT_FUNCTIONS or (isinstance(func, ast.Attribute) and not name and func.attr in LOGGER_METHODS):
        return _caller_frame_reason(ctx, call, depth)
    if (name.startswith("builtins.") and name[len("builtins.") :] in _READING_BUILTINS) or name in _PROCESS_QUERIES:
        return None
    if name.startswith(_READING_MODULES):
        return None
    if any(k.arg == "out" for k in call.keywords):
        return f"`{ctx.excerpt(call, 40)}` writes into `out=`"
    if name.startswith("torch."):
        leaf = name.rsplit(".", 1)[1]
        if leaf.endswith("_"):
            return f"`{ctx.excerpt(call, 40)}` writes in place"
        if leaf in RANDOM or leaf in _GLOBAL_STATE_FUNCTIONS or leaf.startswith("set_") or any(p in name for p in (".distributed.", ".autograd.")):
            return f"`{ctx.excerpt(call, 40)}` draws random numbers, changes process state or communicates"
        return None
    if isinstance(func, ast.Attribute) and not name:
        if func.attr.endswith("_") and not func.attr.startswith("_"):
            return f"`{ctx.excerpt(call, 40)}` writes in place"
        if func.attr in RANDOM or func.attr in _SIDE_EFFECT_METHODS:
            return f"`{ctx.excerpt(call, 40)}` draws random numbers or changes autograd state"
        if ctx.kind(func.value) in TENSOR_KINDS or func.attr in _READING_METHODS:
            return None  # a method that reads (`x.isnan()`, `x.all()`, `x.item()`, `"...".format()`)
        return f"it calls `{ctx.excerpt(func, 40)}`, which may change state"
    if isinstance(func, ast.Name) and func.id in ctx.index.functions and depth < 3:
        callee = ctx.index.functions[func.id]
        if callee is function:
            return f"`{function.name}` calls itself"
        inner = check_function_reason(ctx, callee, depth + 1)
        return None if inner is None else f"it calls `{func.id}`, and {inner}"
    return f"it calls `{ctx.excerpt(func, 40)}`, which may change state"


def reaches_check(ctx: FixContext, function: ast.AST, depth: int = 0) -> bool:
    """Whether calling `function` may raise by a check of its own: a `raise` or `assert` in it or in
    a function of the file it calls."""
    if is_check_like(function):
        return True
    called = {n.func.id for n in walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return depth < 3 and any(reaches_check(ctx, ctx.index.functions[name], depth + 1) for name in called if name in ctx.index.functions)


def module_state_changed(ctx: FixContext, callee: ast.AST, caller: ast.AST) -> str | None:
    """A module-level name `callee` reads (`STATE` of `STATE['step']`) that `caller` changes
    (`STATE["step"] += 1`, `STATE.update(...)`, `global STATE`): dynamo applies such a change
    after the graph, while an op holding the call runs inside it and would read the old value.
    Asked once per pair (effects.py asks it of every statement it looks at)."""
    return ctx.remember(("module-state-changed", id(callee), id(caller)), lambda: _module_state_changed(ctx, callee, caller))


def _module_state_changed(ctx: FixContext, callee: ast.AST, caller: ast.AST) -> str | None:
    own: set[str] = set()
    loaded: set[str] = set()
    for node in walk(callee):
        if isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else own).add(node.id)
    others = set(ctx.index.functions) | set(ctx.index.classes) | set(ctx.index.imports)
    read = {name for name in loaded - own if name in ctx.index.top_level_names and name not in others}
    if not read:
        return None
    for node in walk(caller):
        changed: ast.expr | None = None
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            changed = node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATING_METHODS:
            changed = node.func.value
        elif isinstance(node, ast.Global):
            hit = next((name for name in node.names if name in read), None)
            if hit is not None:
                return hit
        while isinstance(changed, (ast.Subscript, ast.Attribute)):
            changed = changed.value
        if isinstance(changed, ast.Name) and changed.id in read:
            return changed.id
    return None


def reporting_function(ctx: FixContext, call: ast.Call, local: set[str]) -> ast.FunctionDef | None:
    """The module-level function of this file that `call` calls, when calling it only reports
    (torchmetrics' `rank_zero_warn(message)` around `warnings.warn`): such a call is a report like
    `print`, and an `if <tensor test>:` holding only it moves into the op whole, test included.
    None for a function that checks (its exceptions are not this block's to name) or does more;
    raises DeclineError where it reads module state the calling function changes."""
    func = call.func
    if not isinstance(func, ast.Name) or func.id in local or func.id not in ctx.index.functions:
        return None
    callee = ctx.index.functions[func.id]
    only_reports = ctx.remember(("reports-only", id(callee)), lambda: check_function_reason(ctx, callee) is None and not reaches_check(ctx, callee))
    if not only_reports or not isinstance(callee, ast.FunctionDef):
        return None
    caller = ctx.function_of(call)
    changed = module_state_changed(ctx, callee, caller) if caller is not None else None
    if changed is not None:
        raise DeclineError(
            "module-state", f"`{callee.name}` reads `{changed}`, which this function changes: inside the graph the op would read it before that change"
        )
    return callee


def call_statements(ctx: FixContext, function: ast.FunctionDef) -> tuple[list[ast.Expr], list[ast.expr]]:
    """The statements of the file that call `function` and drop its result, and the calls that
    use it or the references that pass the function on - those cannot be moved (one walk of the
    file per function, however many findings ask)."""
    return ctx.remember(("call-statements", id(function)), lambda: _call_statements(ctx, function))


def _call_statements(ctx: FixContext, function: ast.FunctionDef) -> tuple[list[ast.Expr], list[ast.expr]]:
    statements: list[ast.Expr] = []
    other: list[ast.expr] = []
    for node in walk(ctx.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function.name:
            parent = ctx.parent(node)
            if isinstance(parent, ast.Expr):
                statements.append(parent)
            else:
                other.append(node)
        elif isinstance(node, ast.Name) and node.id == function.name and isinstance(node.ctx, ast.Load):
            call = ctx.parent(node)
            compiled = isinstance(call, ast.Call) and ctx.qualname(call.func) == "torch.compile"  # an entry, not a caller
            if not (isinstance(call, ast.Call) and call.func is node) and not compiled:
                other.append(node)  # `self.notify = log_once`: called from where this cannot see
    return statements, other
