"""Whether a local tensor is one no other name can see, so an in-place update of it may become a
rebinding (`y /= s` -> `y = y / s`) without changing what any other reference observes.

An in-place op changes the object: every alias of it (a view, another name, a list holding it,
the caller's argument) sees the change. `y = y / s` leaves the object alone and rebinds `y`. The
two agree only when nothing else refers to the object `y` holds. Conservative and syntactic: the
name must be a local bound only to results that are always new tensors, and read before the
update only where the read cannot keep a reference (arithmetic, comparisons, reductions, sizes).
"""

from __future__ import annotations

import ast

from ..analysis.kinds import NON_TENSOR_KINDS, TENSOR_KINDS, Kind
from ..astwalk import walk
from .context import FixContext

# Calls that always return a new tensor (never their argument or a view of it). `.to()`,
# `.float()`, `.contiguous()`, `.reshape()` and `.detach()` may return the tensor itself or a
# view, so they are not here.
_FRESH_TORCH = frozenset(
    {
        "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "rand", "randn",
        "rand_like", "randn_like", "randint", "arange", "linspace", "logspace", "eye", "tensor",
        "cat", "concat", "stack", "where", "clone", "matmul", "mm", "bmm", "einsum", "outer",
        "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "abs", "sigmoid", "tanh", "sin", "cos", "pow", "clamp",
        "clip", "maximum", "minimum", "add", "sub", "mul", "div", "neg", "reciprocal", "floor", "ceil", "round",
        "sign", "erf", "softmax", "log_softmax", "sum", "mean", "prod", "amax", "amin", "cumsum", "cumprod",
        "logsumexp", "var", "std", "norm", "max", "min", "argmax", "argmin", "any", "all", "isnan", "isinf",
        "isfinite", "isposinf", "isneginf", "signbit", "logical_not", "logical_and", "logical_or", "logical_xor",
        "eq", "ne", "lt", "le", "gt", "ge", "nan_to_num", "masked_fill", "nonzero", "count_nonzero",
    }
)  # fmt: skip
_FRESH_METHODS = frozenset(
    {
        "clone", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "abs", "sigmoid", "tanh", "sin", "cos", "pow",
        "clamp", "clip", "neg", "reciprocal", "floor", "ceil", "round", "sign", "softmax", "log_softmax", "sum",
        "mean", "prod", "amax", "amin", "cumsum", "cumprod", "matmul", "mm", "bmm", "add", "sub", "mul", "div",
        "masked_fill", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "logsumexp", "var", "std",
        "norm", "max", "min", "argmax", "argmin", "any", "all", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
        "signbit", "logical_not", "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
        "nan_to_num", "nonzero", "count_nonzero",
    }
)  # fmt: skip
_NOT_TENSORS = NON_TENSOR_KINDS | {Kind.MODULE, Kind.MODULES, Kind.JIT, Kind.LOGGER}
# Reads through these keep no reference to the tensor (numbers, new tensors, metadata).
_READ_METHODS = _FRESH_METHODS | {"size", "dim", "numel", "item", "tolist", "any", "all", "max", "min", "argmax", "argmin"}
_READ_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad"})


def is_fresh(ctx: FixContext, value: ast.expr) -> bool:
    """`value` evaluates to a tensor object nothing else refers to yet."""
    if isinstance(value, (ast.BinOp, ast.Compare)):
        return True  # tensor arithmetic and comparisons allocate their result
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, (ast.USub, ast.Invert))  # `+t` is `t` itself
    if not isinstance(value, ast.Call):
        return False
    name = ctx.qualname(value.func) or ""
    if name.startswith("torch.") and name.count(".") == 1 and name.split(".")[1] in _FRESH_TORCH:
        return True
    func = value.func
    if not (isinstance(func, ast.Attribute) and func.attr in _FRESH_METHODS and not name.startswith(("torch.", "math.", "numpy."))):
        return False
    # a tensor's own method, not a module's or an object's: `self.norm(x)` may hand `x` back
    receiver = func.value
    return ctx.kind(receiver) in TENSOR_KINDS or not (
        (isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")) or ctx.kind(receiver) in _NOT_TENSORS
    )


def _harmless_read(ctx: FixContext, use: ast.Name) -> bool:
    parent = ctx.parent(use)
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(parent, ast.Attribute) and parent.value is use:
        if parent.attr in _READ_ATTRIBUTES:
            return True
        call = ctx.parent(parent)
        return parent.attr in _READ_METHODS and isinstance(call, ast.Call) and call.func is parent
    if isinstance(parent, ast.Call) and use in parent.args:
        name = ctx.qualname(parent.func) or ""
        return name.startswith("torch.") and name.count(".") == 1 and name.split(".")[1] in _FRESH_TORCH
    return False


def aliasing_reason(ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, update: ast.AugAssign) -> str | None:
    """None when `name op= value` in `function` may become `name = name op (value)`; otherwise
    why not, in words for a decline message."""
    target = update.target
    if not isinstance(target, ast.Name):
        return "it updates an attribute or an element in place"
    return local_aliasing_reason(ctx, function, target.id, update)


def local_aliasing_reason(
    ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, update: ast.stmt, receiver: ast.AST | None = None
) -> str | None:
    """None when the in-place change `update` of the tensor `name` (`name += v`, `name[m] = v`,
    `name.masked_fill_(m, v)`, whose `receiver` is the `name` it writes through) may become a
    rebinding of `name` to a new tensor: no other name, view or caller can see the object `name`
    holds. Otherwise why not, in words."""
    arguments = function.args
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    if name in parameters:
        return f"`{name}` is a parameter: the caller's tensor would no longer be changed"
    for node in walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return f"`{name}` is not a local name"
        nested = isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)) and node is not function
        if nested and any(isinstance(n, ast.Name) and n.id == name for n in walk(node)):
            return f"a nested function refers to `{name}`"
    stores = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    for store in stores:
        statement = ctx.parent(store)
        if isinstance(statement, ast.AugAssign) and statement.target is store:
            continue
        if not (isinstance(statement, ast.Assign) and statement.targets == [store]) or not is_fresh(ctx, statement.value):
            return f"`{name}` may hold a tensor that another name also refers to (only results of arithmetic and new-tensor calls are known not to)"
    loops = [a for a in ctx.ancestors(update) if isinstance(a, (ast.For, ast.AsyncFor, ast.While)) and ctx.contains(function, a) and a is not function]
    outermost = loops[-1] if loops else None
    for use in walk(function):
        if not (isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)):
            continue
        after = use.lineno > update.end_lineno if update.end_lineno is not None else False
        if (after and (outermost is None or not ctx.contains(outermost, use))) or use is receiver:
            # references taken after the update, and after every loop it runs in, see the same value either way
            continue
        if not _harmless_read(ctx, use):
            return f"`{name}` is read where a reference to it may be kept (`{ctx.excerpt(ctx.parent(use) or use, 40)}`)"
    return None
