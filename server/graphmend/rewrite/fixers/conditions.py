"""A branch's tensor condition as code: the 0-d boolean expression a rewrite tests instead.

Shared by the fixers that turn an `if` on a tensor into tensor code (where, while_loop,
mask_check): whether a test is tensor logic, the condition's text (`t.item() > 0` compared as a
tensor, floats in float64 as Python compares them), and whether its leaves are safe to evaluate
on both paths.
"""

from __future__ import annotations

import ast

from ...analysis.kinds import BOOL_KINDS, SCALAR_KINDS, TENSOR_KINDS
from ..context import FixContext
from ..model import DeclineError
from ..purity import check_pure
from ..py_types import name_type, self_attribute_type, self_name
from ..signatures import SCALAR_SHAPE, SINGLE_SHAPE, Signatures

_EXACT_INT = 2**24  # integers a float32 (or any wider) tensor compares exactly


def condition_text(ctx: FixContext, test: ast.expr, torch: str, signatures: Signatures | None = None) -> str:
    """The tensor condition as a 0-d boolean tensor expression. It must be one value: `if t` on a
    tensor of several values raises, where `where` would broadcast. The analysis's kinds say so for
    reductions; the signatures also follow names (`loss = F.mse_loss(...)`; `torch.isnan(loss)`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return f"{torch}.logical_not({condition_text(ctx, test.operand, torch, signatures)})"
    if isinstance(test, ast.BoolOp):
        function = "logical_and" if isinstance(test.op, ast.And) else "logical_or"
        parts = [condition_text(ctx, value, torch, signatures) for value in test.values]
        result = parts[0]
        for part in parts[1:]:
            result = f"{torch}.{function}({result}, {part})"
        return result
    reject_numpy_value(ctx, test)
    whole = whole_comparison_text(ctx, test, torch)
    if whole is not None:
        return whole
    if isinstance(test, ast.Compare) and len(test.ops) > 1:
        return chained_comparison_text(ctx, test, torch, signatures)
    kind = ctx.kind(test)
    if kind not in TENSOR_KINDS:
        compared = number_comparison_text(ctx, test, signatures)
        if compared is not None:
            return compared
        if number_comparison_text(ctx, test, signatures, any_shape=True) is not None:
            raise DeclineError(
                "condition-not-scalar",
                f"the condition `{ctx.excerpt(test, 40)}` reads a tensor not known to be a single value (a reduction such as .any() or .sum())",
            )
        raise DeclineError("python-condition", f"part of the condition (`{ctx.excerpt(test, 40)}`) is a Python value mixed into tensor logic")
    signature = signatures.of(test) if signatures is not None and kind not in SCALAR_KINDS else None
    single = signature is not None and signature.shape == SINGLE_SHAPE  # one element, as (1,): made 0-d
    if kind not in SCALAR_KINDS and (signature is None or signature.shape != SCALAR_SHAPE) and not single:
        raise DeclineError(
            "condition-not-scalar",
            f"the condition `{ctx.excerpt(test, 40)}` is not known to be a single value (a reduction such as .any() or .sum())",
        )
    boolean = kind in BOOL_KINDS or (signature is not None and signature.dtype == ("const", "bool"))
    text = ctx.argument(test) if boolean else f"{ctx.atom(test)} != 0"
    return f"({text}).reshape(())" if single else text


_OPERATORS: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}  # fmt: skip


def reject_numpy_value(ctx: FixContext, test: ast.expr) -> None:
    """Decline a test that reads a NumPy result: dynamo traces it as a tensor (that is why the
    `if` breaks), but eagerly it is an ndarray or a NumPy number, which `torch.where` and the
    ordered-op helpers do not take, and a checked rewrite would still break under compile."""
    numpy_call = ctx.numpy_call_in(test)
    if numpy_call is not None:
        raise DeclineError(
            "numpy-condition",
            f"the condition reads the NumPy value `{ctx.excerpt(numpy_call, 40)}`: a tensor only while dynamo traces it; compute it with torch",
        )


def chained_comparison_text(ctx: FixContext, test: ast.Compare, torch: str, signatures: Signatures | None, any_shape: bool = False) -> str:
    """`lo <= t <= hi` is `(lo <= t) and (t <= hi)`: Python asks for the truth of each link, so
    the whole chain, written as one tensor expression, still breaks the graph. Each link becomes a
    0-d comparison and the links are joined with `logical_and`. The middle operands are written
    twice, which the caller's purity check makes harmless; every link must compare a single value
    (a reduction or a 0-d tensor) with a number or another single value (or, with `any_shape`,
    the caller checks while tracing that the joined links are one value)."""
    operands = [test.left, *test.comparators]
    links = []
    for op, left, right in zip(test.ops, operands, operands[1:]):
        if type(op) not in _OPERATORS:
            raise DeclineError("python-condition", f"`{ctx.excerpt(test, 40)}` chains a comparison other than <, <=, >, >=, ==, !=")
        tensors = [o for o in (left, right) if ctx.kind(o) in TENSOR_KINDS]
        if not tensors:
            raise DeclineError(
                "python-condition", f"part of the condition (`{ctx.excerpt(left, 20)} ... {ctx.excerpt(right, 20)}`) is a Python value mixed into tensor logic"
            )
        if any_shape:
            for operand in (left, right):
                if operand not in tensors and not _number_operand(ctx, operand):
                    raise DeclineError(
                        "chained-not-scalar",
                        f"`{ctx.excerpt(operand, 40)}` in the chained comparison is not known to be a number: Python compares it "
                        "only when the link before holds, and computed on every path it could raise",
                    )
        for operand in [] if any_shape else tensors:
            single = ctx.kind(operand) in SCALAR_KINDS or (
                signatures is not None and signatures.of(operand).shape == SCALAR_SHAPE
            )
            if not single:
                raise DeclineError(
                    "chained-not-scalar",
                    f"`{ctx.excerpt(operand, 40)}` in the chained comparison is not known to be a single value (a reduction such as .any() or .sum())",
                )
        links.append(f"{ctx.atom(left)} {_OPERATORS[type(op)]} {ctx.atom(right)}")
    if any_shape:  # `&`: the links may be Python bools (a list's float), which the one-value check then rejects
        return " & ".join(f"({link})" for link in links)
    result = links[0]
    for link in links[1:]:
        result = f"{torch}.logical_and({result}, {link})"
    return result


def _number_operand(ctx: FixContext, node: ast.expr) -> bool:
    """A number literal (or `float("inf")`), or a name or attribute of `self` known to hold a
    Python int or float (`s_tmax: float`)."""
    if is_small_int(node) or is_float_literal(node):
        return True
    if isinstance(node, ast.Call) and ctx.qualname(node.func) == "builtins.float" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
        return True
    function = ctx.function_of(node)
    if function is None:
        return False
    if python_float_name(ctx, function, node):
        return True
    known = name_type(ctx, function, node.id) if isinstance(node, ast.Name) else None
    return known is not None and not known.optional and known.name == "int"


def whole_comparison(ctx: FixContext, node: ast.expr) -> tuple[str, list[ast.expr], list[ast.keyword]] | None:
    """("allclose" or "equal", [a, b, *more], keywords) for `torch.allclose(a, b, ...)`,
    `a.allclose(b, ...)`, `torch.equal(a, b)` and `a.equal(b)`: a Python bool that dynamo reads
    off the data (GM207), which has an exact tensor form."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    name = ctx.qualname(node.func)
    if name in ("torch.allclose", "torch.equal"):
        args = list(node.args)
    elif node.func.attr in ("allclose", "equal") and ctx.kind(node.func.value) in TENSOR_KINDS:
        args = [node.func.value, *node.args]
    else:
        return None
    leaf = node.func.attr
    if len(args) < 2 or (leaf == "equal" and (len(args) != 2 or node.keywords)) or any(isinstance(a, ast.Starred) for a in args):
        return None
    if any(k.arg is None for k in node.keywords):
        return None
    return leaf, args, list(node.keywords)


def whole_comparison_text(ctx: FixContext, node: ast.expr, torch: str) -> str | None:
    """The 0-d boolean tensor `torch.allclose`/`torch.equal` compute before reading it as a bool.

    `allclose(a, b, rtol, atol, equal_nan)` is `isclose(a, b, rtol, atol, equal_nan).all()` (that
    is how ATen computes it, broadcasting and dtype errors included). `equal(a, b)` is False for
    different shapes and otherwise `(a == b).all()` (NaN unequal to itself in both); the shapes are
    compared while tracing, as dynamo compares any shapes."""
    found = whole_comparison(ctx, node)
    if found is None:
        return None
    leaf, args, keywords = found
    texts = [ctx.argument(a) for a in args]
    if leaf == "allclose":
        rest = ", ".join([*texts, *(f"{k.arg}={ctx.argument(k.value)}" for k in keywords)])
        return f"{torch}.isclose({rest}).all()"
    a, b = (ctx.atom(x) for x in args)
    return f"(({a} == {b}).all() if {a}.shape == {b}.shape else {a}.new_zeros((), dtype={torch}.bool))"


def number_comparison_text(ctx: FixContext, test: ast.expr, signatures: Signatures | None, any_shape: bool = False) -> str | None:
    """`t.item() > 0` / `float(t) <= 1` -> `t > 0` / `t <= 1`, for a 0-d tensor `t` (of any shape
    with `any_shape`: the caller then checks while tracing that `t` has one element, as the
    conversion requires).

    The same truth value for every `t`, NaN included: Python compares the number exactly, torch
    compares in `t`'s dtype, so the other operands must be integers that any dtype holds exactly
    (a float literal such as 0.1 is rounded to float32 by torch but not by Python); a float literal
    or a name that holds a Python float makes the comparison run in float64."""
    if not isinstance(test, ast.Compare) or not all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)) for op in test.ops):
        return None
    replacements: list[tuple[ast.expr, ast.expr]] = []
    float_literal = False
    function = ctx.function_of(test)
    for operand in [test.left, *test.comparators]:
        tensor = converted_scalar(ctx, operand, signatures, any_shape)
        if tensor is not None:
            replacements.append((operand, tensor))
        elif is_float_literal(operand) or (function is not None and python_float_name(ctx, function, operand)):
            float_literal = True  # `loss.item() > max_loss` with `max_loss: float`: compared as a float literal is
        elif not is_small_int(operand):
            return None
    if len(replacements) != 1:
        return None  # two converted values would promote each other's dtypes
    (operand, tensor), = replacements
    rendered = ctx.atom(tensor)
    if float_literal:
        # compare in float64: exact for a floating `t` (float16/32/64 values are all float64
        # values); Python compares an int with a float exactly, and so does float64 for literals
        # below 2**53 (an int beyond that rounds, but stays beyond the literal on the same side)
        if any(is_float_literal(o) and abs(literal_value(o)) >= EXACT_DOUBLE_INT for o in [test.left, *test.comparators]):
            return None
        rendered = f"{rendered}.double()"
    return ctx.code_with(test, {id(operand): rendered})


EXACT_DOUBLE_INT = 2.0**53  # integers float64 holds exactly


def python_float_name(ctx: FixContext, function: ast.AST, node: ast.expr) -> bool:
    """A name that holds a Python float wherever it is bound (`max_norm: float`, `eps = 1e-6`), or
    an attribute of `self` that `__init__` alone sets to floats (`self.threshold = threshold` with
    `threshold: float`, `self.eps = 1e-5`)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name(function):
        known = self_attribute_type(ctx, function, node.attr)
    elif isinstance(node, ast.Name):
        known = name_type(ctx, function, node.id)
    else:
        return False
    return known is not None and not known.optional and known.name == "float"


def literal_value(node: ast.expr) -> float:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -literal_value(node.operand)
    assert isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
    return float(node.value)


def is_float_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is float


def converted_scalar(ctx: FixContext, node: ast.expr, signatures: Signatures | None, any_shape: bool = False) -> ast.expr | None:
    """`t` of `t.item()`, `float(t)` or `bool(t)` when `t` is one value (0-d), or any tensor with
    `any_shape`."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
        tensor = node.func.value
    elif ctx.qualname(node.func) in ("builtins.float", "builtins.bool") and len(node.args) == 1 and not node.keywords:
        tensor = node.args[0]
    else:
        return None
    if ctx.kind(tensor) in SCALAR_KINDS:
        return tensor
    if ctx.kind(tensor) in TENSOR_KINDS and (any_shape or (signatures is not None and signatures.of(tensor).shape == SCALAR_SHAPE)):
        return tensor
    return None


def is_small_int(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    """An integer literal a float32 (or wider) tensor holds exactly."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, bool)) and abs(node.value) < _EXACT_INT


def check_condition_pure(ctx: FixContext, test: ast.expr, role: str) -> None:
    """A condition rewritten with logical_and/or/not: its leaves must be safe to evaluate."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            check_condition_pure(ctx, value, role)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        check_condition_pure(ctx, test.operand, role)
    elif (whole := whole_comparison(ctx, test)) is not None:
        for operand in [*whole[1], *(k.value for k in whole[2])]:
            check_pure(ctx, operand, role)
    elif isinstance(test, ast.Compare):
        # `t.item() < 0.3` is written `t < 0.3`: the tensor is evaluated, not its conversion
        for operand in [test.left, *test.comparators]:
            tensor = converted_scalar(ctx, operand, None, any_shape=True)
            check_pure(ctx, operand if tensor is None else tensor, role)
    else:
        check_pure(ctx, test, role)


def tensor_logic(ctx: FixContext, node: ast.expr, signatures: Signatures | None = None) -> bool:
    """A tensor, a comparison of a tensor's value (`t.item() > 0`), or `not`/`and`/`or` over one
    (Python asks for its truth value)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return tensor_logic(ctx, node.operand, signatures)
    if isinstance(node, ast.BoolOp):
        return any(tensor_logic(ctx, value, signatures) for value in node.values)
    if whole_comparison(ctx, node) is not None:
        return True
    return ctx.kind(node) in TENSOR_KINDS or number_comparison_text(ctx, node, signatures) is not None
