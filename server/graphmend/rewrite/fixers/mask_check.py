"""GM101: run a padding-mask multiplication every time instead of testing the mask for all ones
(issue 8).

State-space models (zamba, zamba2, mamba2-style code) zero the padding positions with

    if attention_mask is not None and not torch.all(attention_mask == 1):
        hidden_states = hidden_states * attention_mask.unsqueeze(1)

The tensor test is only a shortcut: multiplying by a mask of ones gives back every value exactly
(x * 1 == x for every float, NaN, inf and -0.0 included, and every integer). So the branch can run
every time and the test, a graph break because dynamo does not know the mask's values, goes. The
Python part of the condition (`attention_mask is not None`) stays in the `if`. transformers 5.x
made the same change by hand (`apply_mask_to_padding_states`).

A mask derived by slicing, unsqueeze, view/reshape, transpose, permute or a cast is all ones when
the mask is, so the body may multiply by such a view. Each statement of the body must be such a
product assigned back to the tensor it multiplies (optionally cast back with `.to(x.dtype)`), or a
binding of that tensor's dtype. A dtype name read after the `if` too (zamba2's mamba mixer: `dtype
= input_states.dtype` first, `dtype = hidden_states.dtype` in the branch, `out_proj(y.to(dtype))` at
the end) would change if bound every time, unless it already holds that dtype: where it was bound
to a dtype on every path before the `if`, the check below also requires `_graphmend_has_dtype(hidden_states,
dtype)` (known while tracing), so the binding gives `dtype` the value it holds already.

Nothing is assumed: the product is exact only when the mask broadcasts into the tensor without
enlarging it and does not widen its dtype, and a mask that requires grad would now get a gradient
for an all-ones mask too. Dynamo knows shapes, dtypes and `requires_grad` while tracing, so the
rewrite keeps the test behind a check on exactly those (`_graphmend_product_keeps`, added once per
module): where the check holds the test is skipped, with no graph break; where it does not, the
original test runs as before (and breaks as before):

    if attention_mask is not None and (
        _graphmend_product_keeps(hidden_states, attention_mask.unsqueeze(1)) or not torch.all(attention_mask == 1)
    ):

The dual shortcut tests whether a padding mask marks anything before zeroing those positions:
fairseq's encoder does `has_pads = on_xla or encoder_padding_mask.any()`, then `if has_pads: x =
x * (1 - encoder_padding_mask.unsqueeze(-1).type_as(x))`. With no padding marked, `1 - view` is
all ones, so the product again gives back every value. Here the test may be the last operand of
an `or` chain as well (the body then also runs when the Python operands hold, as before), and
the check, `_graphmend_complement_keeps`, also requires a mask that is not bool (`1 - mask`
raises for a bool tensor, where the original, finding no padding, never computed it).

What differs: a view of the mask that cannot be computed at all (an `unsqueeze` past the last
dimension) now raises for an all-ones mask too, where the original skipped it; and the result is a
new tensor, not the caller's (the fixer declines when the function changes the tensor in place).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from ...astwalk import walk
from ...findings import Edit, Finding
from ...quoting import excerpt
from ..compile_checks import COMPLEMENT_KEEPS, HAS_DTYPE, PRODUCT_KEEPS, helper_edits
from ..context import FixContext
from ..flow import changed_in_place_after, parameter_names, reaching_definition, read_after
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..signatures import DTYPE_NAMES
from .conditions import tensor_logic

# Methods whose result is all ones wherever their receiver is (views, layout changes, casts).
ALL_ONES_PRESERVING = frozenset(
    {
        "unsqueeze", "view", "reshape", "expand", "expand_as", "flatten", "transpose", "permute", "contiguous",
        "squeeze", "float", "half", "bfloat16", "double", "long", "int", "bool", "to", "type_as", "view_as",
        "reshape_as", "detach", "t",
    }
)
_ONE = (1, 1.0, True)
LINE_LENGTH = 100  # a longer rewritten test goes on its own lines


@dataclass(frozen=True)
class _Update:
    target: str
    cast_back: bool  # the product is cast back to the target's own dtype
    factor: ast.expr  # the mask, or the view of it, that multiplies the target (in `1 - view`, the view)


@dataclass(frozen=True)
class _SameDtype:
    """`name = tensor.dtype` in the branch, with `name` read after the `if`: bound every time, it
    keeps its value only where `tensor.dtype == name` already (a condition the check adds)."""

    name: str
    tensor: str


@dataclass(frozen=True)
class _MaskTest:
    """The tensor test the rewrite lets dynamo skip, and the Python operands around it."""

    mask: str
    prefix: list[ast.expr]  # the operands of the `and` / `or` chain before the test
    complement: bool  # the test is "marks anything" (`mask.any()`): the body multiplies by `1 - mask`


class MaskCheckFixer:
    narrow = True  # one shape of GM101 (a padding-mask shortcut): its "not my pattern" says least
    codes = frozenset({"GM101"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        tested = ctx.if_testing(finding)
        if tested is None:
            raise DeclineError("not-a-mask-check", "the tensor is not tested by an `if`")
        statement, function = tested
        mask_test = _split(ctx, statement.test)
        if statement.orelse:
            raise DeclineError("mask-check-else", "the `if` has an else branch: skipping the test would drop it")
        updates = [_update(ctx, stmt, mask_test, statement) for stmt in statement.body]
        products = [u for u in updates if isinstance(u, _Update)]
        if not products:
            raise DeclineError("not-identity", "the branch does not multiply anything by the mask")
        for target in dict.fromkeys(p.target for p in products):
            _check_not_changed_in_place(ctx, function, statement, target)
        same_dtypes = [u for u in updates if isinstance(u, _SameDtype)]
        test = _checked_test(ctx, statement, mask_test, products, same_dtypes)
        if ctx.decide_only:
            # `check`'s `[*]`: the test's text in place, unrendered (libcst's parse of the function
            # was most of this fixer's time there), enough for the engine's check of the result
            return Fix(finding, _title(mask_test, products), Safety.SAFE, (Edit(ctx.span(statement.test), test),))
        if_node = ctx.cst_node(function, statement, cst.If)
        assert isinstance(if_node, cst.If)
        helper = COMPLEMENT_KEEPS if mask_test.complement else PRODUCT_KEEPS
        edits = [ctx.rewrite(function, {if_node: if_node.with_changes(test=cst.parse_expression(test))}), *helper_edits(ctx, helper)]
        if same_dtypes:
            edits += helper_edits(ctx, HAS_DTYPE)
        return Fix(finding, _title(mask_test, products), Safety.SAFE, tuple(edits))


def _split(ctx: FixContext, test: ast.expr) -> _MaskTest:
    """The mask test and the Python-level operands before it. The mask test must be the last
    operand of an `and` or `or` chain (or the whole test): with the mask test true whenever the
    product is exact, the chain is true whenever it was, and otherwise only where the body
    changes nothing."""
    operands = test.values if isinstance(test, ast.BoolOp) else [test]
    mask, complement = _not_all_ones(ctx, operands[-1]), False
    if mask is None:
        mask, complement = _marks_any(ctx, operands[-1]), True
    if mask is None:
        raise DeclineError(
            "not-a-mask-check",
            "the condition does not end in `not torch.all(mask == 1)` (or `(mask != 1).any()`), a test that the mask is not all ones, "
            "nor in `mask.any()`, a test that a padding mask marks anything",
        )
    prefix = operands[:-1]
    for operand in prefix:
        if tensor_logic(ctx, operand):
            raise DeclineError("tensor-prefix", f"`{ctx.excerpt(operand, 40)}` is also a tensor test; only the mask test is dropped")
    return _MaskTest(mask, prefix, complement)


def _marks_any(ctx: FixContext, node: ast.expr) -> str | None:
    """`mask` for `mask.any()` and `torch.any(mask)`: a test that the mask is not all zeros."""
    if not isinstance(node, ast.Call) or node.keywords or not isinstance(node.func, ast.Attribute) or node.func.attr != "any":
        return None
    if ctx.qualname(node.func) == "torch.any" and len(node.args) == 1:
        tested = node.args[0]
    elif not node.args:
        tested = node.func.value
    else:
        return None
    return tested.id if isinstance(tested, ast.Name) else None


def _not_all_ones(ctx: FixContext, node: ast.expr) -> str | None:
    """`mask` for `not torch.all(mask == 1)`, `not (mask == 1).all()`, `torch.any(mask != 1)` and
    `(mask != 1).any()`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _reduced_compare(ctx, node.operand, "all", ast.Eq)
    return _reduced_compare(ctx, node, "any", ast.NotEq)


def _reduced_compare(ctx: FixContext, node: ast.expr, reduction: str, operator: type) -> str | None:
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == reduction:
        if ctx.qualname(func) == f"torch.{reduction}" and len(node.args) == 1:
            compared = node.args[0]  # torch.all(mask == 1), under whatever name torch is imported
        elif not node.args:
            compared = func.value  # (mask == 1).all()
        else:
            return None
        return _compared_with_one(compared, operator)
    return None


def _compared_with_one(node: ast.expr, operator: type) -> str | None:
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], operator)):
        return None
    left, right = node.left, node.comparators[0]
    for mask, one in ((left, right), (right, left)):
        if isinstance(mask, ast.Name) and isinstance(one, ast.Constant) and type(one.value) in (int, float, bool) and one.value in _ONE:
            return mask.id
    return None


def _update(ctx: FixContext, stmt: ast.stmt, mask_test: _MaskTest, check: ast.If) -> _Update | _SameDtype | None:
    """A product by the mask assigned back (`x = x * mask...`; `x = x * (1 - mask...)` for a test
    that the mask marks anything), None for a dtype binding that only the products use, or a
    `_SameDtype` for one read after the `if` too. Anything else declines."""
    mask = mask_test.mask
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        if isinstance(stmt, ast.AugAssign):
            raise DeclineError("in-place", "an in-place update would run on the caller's tensor even for an all-ones mask")
        raise DeclineError("not-identity", f"`{ctx.excerpt(stmt, 50)}` is not `x = x * mask`: it may not be the identity for an all-ones mask")
    target, value = stmt.targets[0].id, stmt.value
    if target == mask:
        raise DeclineError("not-identity", f"the branch reassigns the mask `{mask}`")
    if isinstance(value, ast.Attribute) and value.attr == "dtype" and isinstance(value.value, ast.Name):
        if read_after(ctx, check, target):
            return _same_dtype(ctx, stmt, check, target, value.value.id)
        return None
    cast_back = False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "type_as"):
        if not (len(value.args) == 1 and not value.keywords and _is_dtype_of(ctx, value.args[0], target, stmt, check)):
            raise DeclineError("cast-unknown", f"`{ctx.excerpt(value, 50)}` casts to a dtype not known to be `{target}`'s own")
        value, cast_back = value.func.value, True
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        raise DeclineError("not-identity", f"`{ctx.excerpt(stmt, 50)}` is not `x = x * mask`: it may not be the identity for an all-ones mask")
    for own, other in ((value.left, value.right), (value.right, value.left)):
        if not (isinstance(own, ast.Name) and own.id == target):
            continue
        if not mask_test.complement and _derived_from(ctx, other, mask):
            return _Update(target, cast_back, other)
        view = _one_minus(other)
        if mask_test.complement and view is not None and _derived_from(ctx, view, mask):
            return _Update(target, cast_back, view)
    factor = f"`1 - {mask}` or a view of it" if mask_test.complement else f"the mask `{mask}` or a view of it"
    raise DeclineError("not-identity", f"`{ctx.excerpt(value, 50)}` does not multiply `{target}` by {factor}")


def _same_dtype(ctx: FixContext, stmt: ast.Assign, check: ast.If, name: str, tensor: str) -> _SameDtype:
    """`name = tensor.dtype` bound every time keeps `name`'s value where the check finds
    `tensor.dtype == name`: only if `name` holds a dtype on every path to the `if` (the check reads
    it first: an unbound name would raise, another object would not compare as a dtype) and
    `tensor` is still, at that binding, the tensor the check reads."""
    bound = reaching_definition(ctx, check, name)
    if not _is_dtype_value(ctx, bound):
        raise DeclineError(
            "binds-used-name",
            f"`{name}` is read after the `if` and is not bound to a dtype before it: binding it every time would change it",
        )
    if _assigns_between(check.body, check.body[0], stmt, tensor) or (check.body[0] is not stmt and _assigns_target(check.body[0], tensor)):
        raise DeclineError("binds-used-name", f"`{name}` is read after the `if`, and `{tensor}` changes in the branch before its dtype is read")
    return _SameDtype(name, tensor)


def _is_dtype_value(ctx: FixContext, node: ast.expr | None) -> bool:
    """`x.dtype` or `torch.float32` (under whatever name torch is imported)."""
    if isinstance(node, ast.Attribute) and node.attr == "dtype":
        return True
    name = ctx.qualname(node) if isinstance(node, ast.Attribute) else None
    return name is not None and name.startswith("torch.") and name[len("torch.") :] in DTYPE_NAMES


def _assigns_target(stmt: ast.stmt, name: str) -> bool:
    return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)


def _one_minus(node: ast.expr) -> ast.expr | None:
    """`view` for `1 - view` (an integer one: `1.0 - view` of an integer mask would be float)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.left, ast.Constant):
        one = node.left.value
        if type(one) is int and one == 1:
            return node.right
    return None


def _derived_from(ctx: FixContext, node: ast.expr, mask: str) -> bool:
    """All ones wherever `mask` is: the mask itself, a slice of it, or a view/cast of one."""
    if isinstance(node, ast.Name):
        return node.id == mask
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            # slices never raise and never pick values other than the mask's; integer indices
            # could raise where the original never evaluated them
            if isinstance(part, ast.Slice):
                for bound in (part.lower, part.upper, part.step):
                    if bound is not None:
                        check_pure(ctx, bound, "the slice bound")
            elif not (isinstance(part, ast.Constant) and part.value in (None, Ellipsis)):
                return False
        return _derived_from(ctx, node.value, mask)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ALL_ONES_PRESERVING:
        for argument in (*node.args, *(k.value for k in node.keywords)):
            check_pure(ctx, argument, "the view's argument")
        return _derived_from(ctx, node.func.value, mask)
    return False


def _is_dtype_of(ctx: FixContext, node: ast.expr, target: str, stmt: ast.stmt, check: ast.If) -> bool:
    """`x.dtype`, `x` itself (for `type_as`), or a name bound to `x.dtype` in the branch or before
    the `if` with `x` not reassigned in between."""
    if isinstance(node, ast.Name) and node.id == target:
        return True  # type_as(x)
    if isinstance(node, ast.Attribute) and node.attr == "dtype" and isinstance(node.value, ast.Name):
        return node.value.id == target
    if not isinstance(node, ast.Name):
        return False
    for earlier in reversed(check.body[: check.body.index(stmt)]):
        if isinstance(earlier, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in earlier.targets):
            return _is_dtype_of(ctx, earlier.value, target, earlier, check) and not _assigns_between(check.body, earlier, stmt, target)
        if isinstance(earlier, ast.Assign) and any(isinstance(t, ast.Name) and t.id == target for t in earlier.targets):
            return False
    definition = reaching_definition(ctx, check, node.id)
    if not (isinstance(definition, ast.Attribute) and definition.attr == "dtype" and isinstance(definition.value, ast.Name)):
        return False
    if definition.value.id != target:
        return False
    # the dtype was read from the same binding of `target` the `if` sees
    defining = ctx.statement_of(definition)
    if defining is None:
        return False
    seen_there, seen_here = reaching_definition(ctx, defining, target), reaching_definition(ctx, check, target)
    if seen_there is not None:
        return seen_there is seen_here
    return _unchanged_parameter(ctx, target, defining, check)


def _unchanged_parameter(ctx: FixContext, name: str, first: ast.stmt, last: ast.stmt) -> bool:
    """`name` is a parameter bound nowhere before `last` (which is in no loop), so `first` and
    `last` see the same tensor."""
    function = ctx.function_of(last)
    if function is None or any(isinstance(a, (ast.For, ast.AsyncFor, ast.While)) for a in ctx.ancestors(last)):
        return False
    if name not in parameter_names(function) or first.lineno > last.lineno:
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n.lineno < last.lineno for n in walk(function)
    )


def _assigns_between(body: list[ast.stmt], first: ast.stmt, last: ast.stmt, name: str) -> bool:
    between = body[body.index(first) + 1 : body.index(last)]
    return any(isinstance(t, ast.Name) and t.id == name for s in between if isinstance(s, ast.Assign) for t in s.targets)


def _check_not_changed_in_place(ctx: FixContext, function: ast.AST, check: ast.If, name: str) -> None:
    """The product is a new tensor where the original kept the same object for an all-ones mask:
    an in-place change to `name` after the `if` would no longer reach that object (the caller's
    tensor, say)."""
    change = changed_in_place_after(ctx, function, check, name)
    if change is not None:
        raise DeclineError("in-place", f"`{name}` is changed in place after the check (`{excerpt(ctx.code(change).splitlines()[0], 40)}`): the product is a new tensor")


def _checked_test(ctx: FixContext, check: ast.If, mask_test: _MaskTest, products: list[_Update], same_dtypes: list[_SameDtype]) -> str:
    """`prefix and (keeps(x, view) and ... or <the original mask test>)` (`or` for an `or`
    chain): the mask test runs only where the shapes and dtypes do not prove the product exact
    (and, for a dtype name read after the `if`, where it does not already hold that dtype)."""
    helper = COMPLEMENT_KEEPS if mask_test.complement else PRODUCT_KEEPS
    checks = list(
        dict.fromkeys(f"{helper}({p.target}, {ctx.code(p.factor)}{'' if not p.cast_back else ', same_dtype=False'})" for p in products)
    )
    checks += list(dict.fromkeys(f"{HAS_DTYPE}({d.tensor}, {d.name})" for d in same_dtypes))
    test = check.test
    operands = test.values if isinstance(test, ast.BoolOp) else [test]
    joiner = " or " if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else " and "
    guarded = f"{' and '.join(checks)} or {ctx.code(operands[-1])}"  # `and` binds tighter: the checks, or else the test
    python_part = joiner.join(ctx.code(p) for p in mask_test.prefix)
    one_line = f"{python_part}{joiner}({guarded})" if mask_test.prefix else guarded
    if check.col_offset + len(f"if {one_line}:") <= LINE_LENGTH:
        return one_line
    wrapped = f"(\n    {guarded}\n)"  # libcst indents continuation lines to the `if`
    return f"{python_part}{joiner}{wrapped}" if mask_test.prefix else wrapped


def _title(mask_test: _MaskTest, products: list[_Update]) -> str:
    targets = ", ".join(dict.fromkeys(f"`{p.target}`" for p in products))
    mask = mask_test.mask
    if mask_test.complement:
        return (
            f"Skip the test of whether `{mask}` marks anything when compiling: multiply {targets} by `1 - {mask}` every time "
            f"(exact where it marks nothing), where dynamo knows the mask keeps {targets}'s shape and dtype; elsewhere the test runs as before"
        )
    return (
        f"Skip the all-ones test of `{mask}` when compiling: multiply {targets} by it every time (exact for an all-ones mask), "
        f"where dynamo knows the mask keeps {targets}'s shape and dtype; elsewhere the test runs as before"
    )
