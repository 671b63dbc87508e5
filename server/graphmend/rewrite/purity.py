"""May this expression be evaluated when the original program would not have evaluated it?

Turning a branch into `torch.where` evaluates both sides. That is only meaning-preserving when
the side that was skipped has no effect anyone can observe: no in-place writes, no I/O, no draws
from a random generator (the stream would shift), no calls with unknown effects, and nothing
that can raise depending on data (`.item()`, indexing with a data-dependent index, asserts).
Shape errors are not considered: shapes are fixed while tracing, so they do not depend on which
branch the data selects.
"""

from __future__ import annotations

import ast

from ..analysis.kinds import TENSOR_KINDS
from ..analysis.tensors import PY_METHODS
from ..astwalk import walk
from .compile_checks import (
    BROADCAST_FREE,
    BROADCASTABLE,
    COMPLEMENT_KEEPS,
    COUNTS_FIT,
    FLOATING,
    LENGTHS_FIT,
    MASK_SELECTS_ALIKE,
    MASK_SELECTS_ROWS,
    MASK_SPANS,
    NUMBER_DTYPE,
    ONE_VALUE,
    PRODUCT_KEEPS,
    SAME_TYPE,
    SPREAD_MASK,
)
from .context import FixContext
from .model import DeclineError

# Functions and methods that draw random numbers (evaluating them once more changes the stream).
RANDOM = frozenset(
    {
        "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
        "multinomial", "normal", "poisson", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
        "feature_alpha_dropout", "rrelu", "uniform", "random", "exponential", "geometric", "cauchy", "log_normal",
    }
)
# torch.nn layers whose call is a pure function of the input (no RNG, no state updates in eval or
# training): calling one for the branch that was not taken is unobservable.
PURE_MODULES = frozenset(
    {
        "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "Embedding", "LayerNorm", "GroupNorm", "RMSNorm", "Identity", "ReLU", "ReLU6", "GELU", "SiLU", "Mish",
        "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softplus", "ELU", "LeakyReLU", "Hardswish", "Hardsigmoid",
        "Flatten", "Unflatten", "Softsign", "Tanhshrink", "PReLU", "GLU",
    }
)
# Calls that cannot be evaluated speculatively (they raise, break or observe data as Python values).
UNSAFE_METHODS = frozenset(PY_METHODS) | {"numpy", "cpu", "cuda", "to_sparse", "nonzero", "unique", "masked_select"}
UNSAFE_TORCH = frozenset(
    {
        "_assert", "_check", "_check_with", "_check_is_size", "nonzero", "unique", "masked_select", "bincount",
        "argwhere", "save", "load", "manual_seed", "set_rng_state", "equal", "allclose", "is_nonzero",
    }
)
# GraphMend's own module-level predicates (compile_checks.py): they read dtypes, shapes and
# devices only, so evaluating one on a path not taken is unobservable. `_graphmend_spread_mask`
# is a reshape that keeps the element count, a view that cannot raise.
GENERATED_PREDICATES = frozenset(
    {
        NUMBER_DTYPE, SAME_TYPE, PRODUCT_KEEPS, COMPLEMENT_KEEPS, COUNTS_FIT, BROADCASTABLE, ONE_VALUE, MASK_SELECTS_ALIKE, MASK_SELECTS_ROWS, MASK_SPANS, SPREAD_MASK,
        LENGTHS_FIT, BROADCAST_FREE, FLOATING,
    }
)
_SAFE_BUILTINS = frozenset(
    {"len", "min", "max", "abs", "isinstance", "getattr", "hasattr", "tuple", "list", "float", "int", "bool", "round", "str"}
)


def _fail(key: str, reason: str) -> DeclineError:
    return DeclineError(key, reason)


def is_pure(ctx: FixContext, expr: ast.AST) -> bool:
    """`check_pure` as a yes/no, for callers that fall back rather than decline."""
    try:
        check_pure(ctx, expr, "the value")
    except DeclineError:
        return False
    return True


def check_pure(ctx: FixContext, expr: ast.AST, role: str, depth: int = 0) -> None:
    """Raise DeclineError unless `expr` can be evaluated speculatively (see module docstring)."""
    for node in walk(expr):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            raise _fail("impure", f"{role} has an effect ({ctx.excerpt(node, 40)})")
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            raise _fail("impure", f"{role} contains a comprehension or lambda")
        # `a or b` takes the truth value of `a` alone: the last operand is the result, tested (or
        # not) by whoever reads it (`has_pads = on_xla or mask.any()`, then `if has_pads:`)
        tested = node.values[:-1] if isinstance(node, ast.BoolOp) else [node.operand] if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) else []
        if any(ctx.kind(v) in TENSOR_KINDS for v in tested):
            raise _fail("can-raise", f"{role} takes the truth value of a tensor")
        if isinstance(node, ast.Subscript):
            _check_index(ctx, node, role)
        if isinstance(node, ast.Call):
            _check_call(ctx, node, role, depth)


def _check_index(ctx: FixContext, node: ast.Subscript, role: str) -> None:
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for part in parts:
        bounds = [part.lower, part.upper, part.step] if isinstance(part, ast.Slice) else [part]
        for bound in bounds:
            if bound is not None and ctx.kind(bound) in TENSOR_KINDS:
                raise _fail(
                    "can-raise",
                    f"{role} indexes with the tensor `{ctx.excerpt(bound, 30)}`, which may be out of range on the path not taken",
                )


def _check_call(ctx: FixContext, call: ast.Call, role: str, depth: int) -> None:
    func = call.func
    if any(k.arg == "out" for k in call.keywords):
        raise _fail("impure", f"{role} writes to an `out=` tensor")
    name = ctx.qualname(func)
    if name is not None:
        leaf = name.rsplit(".", 1)[1]
        if name.startswith("torch."):
            _check_torch_op(leaf, f"`{name}`", UNSAFE_TORCH, role, "; computing it on both paths shifts the generator")
            if name.startswith(("torch.cuda", "torch.distributed", "torch.jit", "torch._dynamo", "torch.compiler")):
                raise _fail("impure", f"{role} calls `{name}`")
            return
        if name.startswith("builtins.") and leaf in _SAFE_BUILTINS:
            return
        if name.startswith("math."):
            return
        raise _fail("impure", f"{role} calls `{ctx.excerpt(func, 40)}`, whose effects are unknown")
    if isinstance(func, ast.Attribute):
        method = func.attr
        receiver = ctx.kind(func.value)
        if receiver in TENSOR_KINDS:
            _check_torch_op(method, f"`.{method}()`", UNSAFE_METHODS, role)
            return
        if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            torch_class = _self_module_class(ctx, call, func.attr)
            if torch_class is not None:
                if torch_class in PURE_MODULES:
                    return
                raise _fail("impure", f"{role} calls `self.{func.attr}` (a `{torch_class}`), which is not a pure function")
            helper = _in_file_method(ctx, call, func.attr)
            if helper is not None:
                _check_helper(ctx, helper, role, depth)
                return
        resolved = ctx.result.resolved_calls.get(id(call))
        if resolved:  # a method of an instance of an in-file class (`spec.project(x)`), as the walk resolved it
            for helper in resolved:
                _check_helper(ctx, helper, role, depth)
            return
        raise _fail("impure", f"{role} calls `{ctx.excerpt(func, 40)}`, whose effects are unknown")
    if isinstance(func, ast.Name) and func.id in GENERATED_PREDICATES:
        return
    if isinstance(func, ast.Name) and func.id in ctx.index.functions:
        _check_helper(ctx, ctx.index.functions[func.id], role, depth)
        return
    raise _fail("impure", f"{role} calls `{ctx.excerpt(func, 40)}`, whose effects are unknown")


def _check_torch_op(op: str, shown: str, can_raise: frozenset[str], role: str, random_note: str = "") -> None:
    """What a torch function and a tensor method are checked for alike: writing in place, drawing
    random numbers, raising on values the path not taken may hold."""
    if op.endswith("_") and not op.endswith("__"):
        raise _fail("impure", f"{role} calls the in-place {shown}")
    if op in RANDOM:
        raise _fail("random", f"{role} draws random numbers ({shown}){random_note}")
    if op in can_raise:
        raise _fail("can-raise", f"{role} calls {shown}, which cannot be evaluated speculatively")


def _self_module_class(ctx: FixContext, call: ast.Call, attr: str) -> str | None:
    function = ctx.function_of(call)
    owner = ctx.index.owner.get(id(function)) if function is not None else None
    if owner is None:
        return None
    return owner.attr_torch_classes.get(attr)


def _in_file_method(ctx: FixContext, call: ast.Call, attr: str) -> ast.FunctionDef | None:
    function = ctx.function_of(call)
    owner = ctx.index.owner.get(id(function)) if function is not None else None
    return ctx.index.method(owner, attr) if owner is not None else None


def _check_helper(ctx: FixContext, helper: ast.FunctionDef, role: str, depth: int) -> None:
    """An in-file helper is pure when its body only binds locals from pure expressions and returns."""
    if depth >= 2:
        raise _fail("impure", f"{role} calls `{helper.name}`, nested too deeply to check")
    for stmt in helper.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring
        if isinstance(stmt, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) for t in stmt.targets):
            check_pure(ctx, stmt.value, f"{role} (through `{helper.name}`)", depth + 1)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                check_pure(ctx, stmt.value, f"{role} (through `{helper.name}`)", depth + 1)
        else:
            raise _fail("impure", f"{role} calls `{helper.name}`, which does more than compute a value")
