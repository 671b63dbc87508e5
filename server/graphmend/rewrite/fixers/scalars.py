"""GM201/GM203: `t.item()`, `float(t)`, `int(t)`, `bool(t)` -> keep the 0-d tensor.

A Python number taken out of a tensor only to be multiplied back into tensors can stay a tensor:
no break, same values. It must not change what it feeds (taxonomy P03, P08):
- every use is an operand of `+ - * /` whose other operand is a tensor (a Python float in a
  `range`, a size, a condition or a return value is not interchangeable with a tensor);
- the dtype that arithmetic produces must not change: a 0-d tensor promotes like a Python scalar
  against a tensor with dimensions, but not against another 0-d tensor (0-d float64 * 0-d float32
  is float64; a Python float * 0-d float32 is float32). So the other operand must be known
  floating point, and the value integral or provably of the other operand's dtype (found by the
  property tests in tests/test_fix_properties.py);
- `int(t)` truncates toward zero: a floating `t` becomes `t.trunc()` (unsafe: `int()` raises on
  NaN and infinity, `trunc()` carries them on), an integer `t` stays `t`; `bool(t)` becomes `t != 0`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, MAYBE_PYTHON_KINDS, SCALAR_KINDS, TENSOR_KINDS, Kind
from ...astwalk import walk
from ...findings import Edit, Finding
from ..aliasing import is_fresh
from ..compile_checks import (
    DIVIDE_BY_NUMBER,
    FLOAT_DIVISOR,
    HOLDS_VALUES,
    INT_DIVISOR,
    MASK_SELECTS_ALIKE,
    NUMBER_DTYPE,
    ONE_VALUE,
    call_text,
    checked_or_original,
    helper_edits,
)
from ..context import FixContext
from ..flow import is_in_place_call
from ..index_use import index_use
from ..lookahead import require_branches_fixed_after
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..py_types import BOOL, FLOAT, INT, Function, own_nodes, value_type
from ..selections import SelectionCount, counted_by, reference_root, rereadable, selection_count, selection_of
from ..signatures import FLOATS, SCALAR_SHAPE, UNKNOWN, Sig, Signatures, floating_names
from .conditions import EXACT_DOUBLE_INT, condition_text, is_float_literal, is_small_int, literal_value, python_float_name

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _snapshot(ctx: FixContext, tensor: ast.expr) -> str:
    """The tensor as `.item()` saw it: detached (a Python number carries no gradient, so the
    rewrite must not send one back into `tensor`), and copied unless it is a value nothing else
    refers to (a later in-place change of a named tensor must not reach the number taken before)."""
    if ctx.kind(tensor) in BOOL_KINDS:  # no gradient to stop
        return ctx.atom(tensor) if is_fresh(ctx, tensor) else f"{ctx.atom(tensor)}.clone()"
    detached = f"{ctx.atom(tensor)}.detach()"
    return detached if is_fresh(ctx, tensor) else f"{detached}.clone()"


def _not_one_value(ctx: FixContext, tensor: ast.expr) -> DeclineError:
    return DeclineError("not-one-value", f"cannot prove `{ctx.excerpt(tensor, 30)}` is 0-d: a tensor of one element with dimensions would broadcast")


def _zero_d(ctx: FixContext, signatures: Signatures, tensor: ast.expr, call: ast.expr) -> str:
    """The snapshot of `tensor` as the 0-d tensor the Python number becomes. `.item()` and
    `float()` take any tensor of one element: one of shape (1, 1) kept as it is would broadcast
    what it meets to its rank (`x / t` of shape (1, 3) where the original's is (3,)). A tensor not
    known to be 0-d is reshaped to 0-d where it has one element; with more (or none) the original
    conversion runs, and raises as it did."""
    snapshot = _snapshot(ctx, tensor)
    if ctx.kind(tensor) in SCALAR_KINDS or signatures.of(tensor).shape == SCALAR_SHAPE:
        return snapshot
    if not rereadable(tensor):
        raise _not_one_value(ctx, tensor)
    torch = ctx.torch_name()
    return checked_or_original(f"{snapshot}.reshape(())", call_text(ONE_VALUE, ctx.code(tensor)), f"{torch}.as_tensor({ctx.code(call)})")


class ScalarFixer:
    codes = frozenset({"GM201", "GM202", "GM203", "GM401", "GM402", "GM403", "GM102"})
    narrow = frozenset({"GM401", "GM402", "GM403"})  # of a selection it rewrites only a count
    safety = Safety.SAFE
    title = "Keep the value as a 0-d tensor instead of a Python number"
    title_count = "Count the selected elements as a 0-d tensor (torch.count_nonzero) instead of reading a Python int off a data-dependent shape"
    title_choice = "Choose the number with torch.where as a 0-d tensor instead of branching on a tensor"
    title_unpacked = "Unpack the values as 0-d tensors (`t.unbind(0)`) instead of Python numbers from `t.tolist()`"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        if finding.code in ("GM401", "GM402", "GM403"):
            return self._plan_count(finding, ctx)
        if finding.code == "GM102":
            return self._plan_choice(finding, ctx)
        if finding.code == "GM202":
            return self._plan_unpacked(finding, ctx)
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call):
            raise DeclineError("no-node", "could not find the conversion in the source")
        if _tests_a_choice_of_literals(ctx, call):  # `0.5 if t.item() > 0 else 2.0`
            return self._plan_choice(finding, ctx)
        function = ctx.function_of(call)
        if function is None:
            raise DeclineError("not-in-function", "the conversion is not inside a function")
        tensor, conversion = self._operand(ctx, call)
        if ctx.kind(tensor) not in TENSOR_KINDS:
            # a number drawn with `random`, or a sum a loop may not have run for: a Python number
            # when run eagerly, which `torch.as_tensor` would round to float32
            raise DeclineError("not-a-tensor", f"`{ctx.excerpt(tensor, 30)}` may be a Python number when the code runs")
        statement = ctx.statement_of(call)
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        hoist: str | None = None
        try:
            zero_d = _zero_d(ctx, signatures, tensor, call)
        except DeclineError:
            # `n = masked_mean(x, m).item()`: the tensor is a call, not read twice for the check;
            # bound to a name of its own first (`n_value = masked_mean(x, m)`), it is
            hoist = _hoist_name(ctx, function, call, tensor)
            zero_d = _zero_d_of_name(ctx, tensor, hoist)
        replacement = self._replacement(ctx, tensor, conversion, signatures, zero_d)
        value_dtype = ("const", "bool") if conversion == "bool" else signatures._norm(signatures.of(tensor).dtype)
        if conversion == "float" and not signatures.is_floating(value_dtype):
            # float(t) of an integer or unknown dtype is a Python float: float64 holds it exactly
            # (as it holds every float32 or int value), and meets tensors as that float did
            replacement, value_dtype = f"{replacement}.double()", ("const", "float64")
        return self._plan_number(finding, ctx, function, signatures, call, tensor, replacement, value_dtype, conversion, self.title, hoist=hoist)

    def _plan_count(self, finding: Finding, ctx: FixContext) -> Fix:
        """`len(x[m])`, `x[m].numel()`, `m.nonzero().size(0)`: the number of selected elements is
        `torch.count_nonzero(m)`, an int64 0-d tensor, then kept as the number was (its uses checked
        as for `.item()`)."""
        node = ctx.node_for(finding, (ast.Subscript, ast.Call))
        function = ctx.function_of(node) if node is not None else None
        count = selection_count(ctx, node) if node is not None and function is not None else None
        binding: ast.Assign | None = None
        if count is None and node is not None and function is not None:
            # `valid = x[m]` then only `n = valid.size(0)`: the count, with the binding gone
            count, binding = _bound_selection_count(ctx, function, node)  # type: ignore[arg-type]
        if count is None or function is None:
            raise DeclineError("not-a-count", "the selection is not only counted")
        statement = ctx.statement_of(count.node)
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        torch = ctx.torch_name()
        replacement = f"{torch}.count_nonzero({ctx.code(count.mask)})"
        if count.per_element:
            replacement = f"({replacement} * {ctx.atom(count.mask)}.dim())"
        if count.selected is not None:  # `x[m]`: a boolean mask with x's shape counts what it selects
            proven = ctx.kind(count.mask) in BOOL_KINDS and signatures.equal_shapes(signatures.of(count.mask), signatures.of(count.selected))
            if not proven:
                if not rereadable(count.mask) or reference_root(count.selected) is None:
                    raise DeclineError("mask-shape", f"cannot prove the mask `{ctx.excerpt(count.mask, 30)}` has the shape of `{ctx.excerpt(count.selected, 30)}`")
                check = call_text(MASK_SELECTS_ALIKE, ctx.code(count.mask), ctx.code(count.selected))
                original = ctx.code(count.node)
                if binding is not None:  # the name is gone: the original count reads the selection itself
                    name = binding.targets[0].id  # type: ignore[attr-defined]
                    original = re.sub(rf"\b{name}\b", lambda _: f"({ctx.code(binding.value)})", original, count=1)
                replacement = checked_or_original(replacement, check, f"{torch}.as_tensor({original})")
        removed = (binding,) if binding is not None else ()
        return self._plan_number(
            finding, ctx, function, signatures, count.node, count.mask, replacement, ("const", "int64"), "count", self.title_count, removed=removed
        )

    def _plan_choice(self, finding: Finding, ctx: FixContext) -> Fix:
        """`s = 0.5 if t.mean() > 0 else 2.0`: two number literals of one type chosen by a tensor
        condition are `torch.where(cond, a, b)` with `a` a float64 (int64) 0-d tensor, the type
        Python computes the literal in, so the value is exact; then kept as the number was (its
        uses checked as for `.item()`)."""
        node = ctx.node_for(finding, (ast.expr,))
        ifexp = next((a for a in [node, *ctx.ancestors(node)] if isinstance(a, ast.IfExp)), None) if node is not None else None
        function = ctx.function_of(ifexp) if ifexp is not None else None
        if ifexp is None or function is None:
            raise DeclineError("not-an-if", "the tensor condition is not the test of a conditional expression in a function")
        types = {_literal_type(value) for value in (ifexp.body, ifexp.orelse)}
        if len(types) != 1 or None in types:
            raise DeclineError("not-numbers", "the two values are not number literals of one type (int or float)")
        dtype = "float64" if types == {float} else "int64"
        statement = ctx.statement_of(ifexp)
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        torch = ctx.torch_name()
        # the test is evaluated once, where it was: it needs no purity, only the tensor form
        condition = condition_text(ctx, ifexp.test, torch, signatures)
        chosen = f"{torch}.tensor({ctx.code(ifexp.body)}, dtype={torch}.{dtype})"
        replacement = f"{torch}.where({condition}, {chosen}, {ctx.code(ifexp.orelse)})"
        return self._plan_number(finding, ctx, function, signatures, ifexp, ifexp.test, replacement, ("const", dtype), "item", self.title_choice)

    def _plan_unpacked(self, finding: Finding, ctx: FixContext) -> Fix:
        """`a, b = t.tolist()` of a tensor: each name gets its value as a 0-d tensor,
        `t.unbind(0)` (detached: a Python number carries no gradient), where `t` has one dimension
        of as many values as there are names (settled while tracing; otherwise the original
        `tolist()` runs, and unpacks or raises as before). Each name's uses are checked as those
        of `n = t.item()` are."""
        call = ctx.node_for(finding, (ast.Call,))
        statement = ctx.parent(call) if call is not None else None
        if not (
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "tolist" and not call.args and not call.keywords
            and isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)
        ):
            raise DeclineError("not-unpacked", "only `a, b = t.tolist()`, unpacked into names, is rewritten")
        names = [e.id for e in statement.targets[0].elts]  # type: ignore[attr-defined]
        function = ctx.function_of(call)
        tensor = call.func.value
        if function is None or len(set(names)) != len(names):
            raise DeclineError("not-unpacked", "the names are not distinct names of a function")
        if ctx.kind(tensor) not in TENSOR_KINDS or ctx.kind(tensor) in MAYBE_PYTHON_KINDS:
            raise DeclineError("not-a-tensor", f"`{ctx.excerpt(tensor, 30)}` may be a Python value when the code runs")
        if reference_root(tensor) is None:
            # the shape check reads the tensor again: a call (`make(x).tolist()`, `torch.randn(2)`)
            # would run twice, printing or drawing twice
            raise DeclineError("unpacked-not-a-name", f"`{ctx.excerpt(tensor, 30)}` is computed, not a name: checking its shape would compute it again")
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        value_dtype = signatures._norm(signatures.of(tensor).dtype)
        tested: list[ast.If] = []
        chains: list[tuple[ast.expr, str]] = []
        for name in names:
            chains += self._check_variable(ctx, signatures, function, statement, name, value_dtype, False, tested)
        check = call_text(HOLDS_VALUES, ctx.code(tensor), str(len(names)))
        replacement = checked_or_original(f"{_snapshot(ctx, tensor)}.unbind(0)", check, ctx.code(call))
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {
            _cst_of(ctx, function, call): cst.parse_expression(replacement)
        }
        replacements.update({_cst_of(ctx, function, node): cst.parse_expression(text) for node, text in chains})
        edits = [ctx.rewrite(function, replacements), *helper_edits(ctx, HOLDS_VALUES)]
        for helper in (FLOAT_DIVISOR, INT_DIVISOR, NUMBER_DTYPE, DIVIDE_BY_NUMBER):
            if any(helper in text for _, text in chains):
                edits += helper_edits(ctx, helper)
        if tested:
            why = "a value is tested by an `if`, which would then branch on a tensor"
            require_branches_fixed_after(ctx, edits, function, finding.function, tested, Safety.SAFE, why)
        return Fix(finding, self.title_unpacked, Safety.SAFE, tuple(edits))

    def _plan_number(
        self,
        finding: Finding,
        ctx: FixContext,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        signatures: Signatures,
        call: ast.expr,
        tensor: ast.expr,
        replacement: str,
        value_dtype: tuple,
        conversion: str,
        title: str,
        depth: int = 0,
        hoist: str | None = None,
        removed: tuple[ast.stmt, ...] = (),
    ) -> Fix:
        """The number `call` evaluates to, kept as the 0-d tensor `replacement`, wherever its uses
        allow it (tensor arithmetic, Python arithmetic before it, a local read only so, the
        return value of a private helper whose callers allow it); `title` says what the number
        was, the rest of the title what the arithmetic on it became. `depth` counts the helpers
        the number has been returned through."""
        tested: list[ast.If] = []  # the `if`s that test the number (filled by _check_variable)
        steps, problem = _python_steps(ctx, signatures, call, value_dtype) if conversion in ("item", "float", "count") else (_Steps(), None)
        end: ast.expr = steps[-1] if steps else call
        parent = ctx.parent(end)
        chains: list[tuple[ast.expr, str]] = []
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC):
            if depth and not steps and isinstance(parent.op, ast.Div) and parent.right is end:
                # the CUDA-exact division needs the number's value beside the tensor: the helper
                # would run twice (its effects too); bound to a name first, it is taken
                raise DeclineError("used-as-number", "a caller divides by the helper's result directly")
            value = None if steps else replacement
            replacement = self._into_arithmetic(ctx, signatures, call, steps, problem, parent, tensor, replacement, value_dtype, conversion == "float")
            end, replacement = _as_python_divides(ctx, parent, end, replacement, value)
        elif (binding := _binds_a_name(ctx, end)) is not None:
            replacement, value_dtype, python_float = _bound_form(
                ctx, signatures, call, steps, problem, replacement, tensor, value_dtype, conversion == "float", exact_int=conversion == "count"
            )
            target = binding.targets[0].id  # type: ignore[attr-defined]
            chains = self._check_variable(ctx, signatures, function, binding, target, value_dtype, python_float, tested)
        elif conversion == "count" and not steps and (branch := _tested_branch(ctx, function, end, _size_operand(ctx, signatures))) is not None:
            # `if x[m].numel() != y.numel(): raise ...`: the count compared with sizes, exactly as
            # int64, and the `if` left for the fixer of a tensor test (a check, typically)
            tested.append(branch)
        elif isinstance(parent, ast.Return) and parent.value is end and not steps and depth < _MAX_HELPER_DEPTH:
            return self._plan_returned(finding, ctx, function, end, replacement, value_dtype, title, depth)
        else:
            raise DeclineError("used-as-number", f"the number is used where a tensor would not do: {_consumer(ctx, parent, end)}")
        if depth and tested:
            raise DeclineError("used-as-number", "the number is tested by an `if` in a caller of the helper")
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {
            _cst_of(ctx, function, end): cst.parse_expression(replacement)
        }
        if hoist is not None:
            replacements = _hoisted(ctx, function, end, tensor, hoist, replacement)
        for statement in removed:
            ctx.remove_statement(function, statement, replacements)
        replacements.update({_cst_of(ctx, function, node): cst.parse_expression(text) for node, text in chains})
        edits = [ctx.rewrite(function, replacements)]
        for helper in (FLOAT_DIVISOR, INT_DIVISOR, NUMBER_DTYPE, MASK_SELECTS_ALIKE, ONE_VALUE, DIVIDE_BY_NUMBER):
            if any(helper in text for text in [replacement, *(t for _, t in chains)]):
                edits += helper_edits(ctx, helper)
        if tested:
            why = "the number is tested by an `if`, which would then branch on the tensor"
            require_branches_fixed_after(ctx, edits, function, finding.function, tested, Safety.SAFE, why)
        texts = [replacement, *(t for _, t in chains)]
        originals = [ctx.code(end), *(ctx.code(node) for node, _ in chains)]

        def added(marker: str) -> bool:  # the rewrite wrote it (the user's code may hold it already)
            return sum(t.count(marker) for t in texts) > sum(o.count(marker) for o in originals)

        if ".trunc()" in replacement:
            # int(nan) and int(inf) raise; trunc() carries them on: the only behaviour that changes.
            return Fix(finding, "Keep int(t) as the 0-d tensor t.trunc() (a NaN or infinite t no longer raises)", Safety.UNSAFE, tuple(edits))
        if added(".reshape(1).to("):
            return Fix(finding, f"{title} (it indexes as a one-element tensor: the same rows, gathered or written as one)", Safety.SAFE, tuple(edits))
        if added(".double()"):
            return Fix(finding, f"{title} (the Python arithmetic on it done in float64, as Python does, then rounded once)", Safety.SAFE, tuple(edits))
        if added(".clamp("):
            return Fix(finding, f"{title} (Python's max/min of it as torch.clamp)", Safety.SAFE, tuple(edits))
        if added(".to("):
            return Fix(finding, f"{title} (rounded to the dtype of the tensor it meets, as the Python number was)", Safety.SAFE, tuple(edits))
        return Fix(finding, title, Safety.SAFE, tuple(edits))

    def _plan_returned(
        self, finding: Finding, ctx: FixContext, helper: Function, end: ast.expr, replacement: str, value_dtype: tuple, title: str, depth: int
    ) -> Fix:
        """`return t.item()` in a private helper (`def _amax(x): return x.abs().max().item()`):
        the helper returns the 0-d tensor instead, where every call of it is in a function whose
        uses of the result allow a tensor, checked and rewritten as for the number itself there
        (one call per calling function). Private, because another module could call a public
        helper and get a tensor where it expects a number."""
        sites = _helper_calls(ctx, helper)
        if ".trunc()" in replacement:
            raise DeclineError("used-as-number", "int(t) would be kept as t.trunc(), which no longer raises for NaN; not through a helper")
        edits: list[Edit] = [ctx.rewrite(helper, {_cst_of(ctx, helper, end): cst.parse_expression(replacement)})]
        if ONE_VALUE in replacement:
            edits += helper_edits(ctx, ONE_VALUE)
        # the caller knows the value's dtype only where it is a constant (a name of the helper's
        # own would mean another tensor there)
        caller_dtype = value_dtype if value_dtype[0] == "const" else UNKNOWN
        titles = []
        for site in sites:
            caller = ctx.function_of(site)
            statement = ctx.statement_of(site)
            assert caller is not None and statement is not None  # checked by _helper_calls
            signatures = Signatures(ctx, floating_names(ctx, caller, statement), at=statement)
            try:
                fix = self._plan_number(finding, ctx, caller, signatures, site, site, ctx.code(site), caller_dtype, "item", title, depth + 1)
            except DeclineError as declined:
                reason = f"`{helper.name}` returns it to `{ctx.excerpt(site, 40)}`, where {declined.reason}"
                raise DeclineError(declined.key, reason) from None
            edits += fix.edits
            titles.append(fix.title)
        unique = list(dict.fromkeys(edits))  # a helper function added by two sites is added once
        detail = max(titles, key=len) if titles else title
        return Fix(finding, f"{detail}; `{helper.name}` returns the 0-d tensor to its callers", Safety.SAFE, tuple(unique))

    def _operand(self, ctx: FixContext, call: ast.Call) -> tuple[ast.expr, str]:
        if isinstance(call.func, ast.Attribute) and call.func.attr == "item" and not call.args:
            return call.func.value, "item"
        name = ctx.qualname(call.func)
        if name in ("builtins.float", "builtins.int", "builtins.bool") and len(call.args) == 1 and not call.keywords:
            return call.args[0], name.split(".")[1]
        raise DeclineError("conversion", "only .item(), float(), int() and bool() of a tensor are rewritten")

    def _replacement(self, ctx: FixContext, tensor: ast.expr, conversion: str, signatures: Signatures, text: str) -> str:
        """`text` (the tensor as a 0-d snapshot) in the form of the conversion's value."""
        dtype = signatures._norm(signatures.of(tensor).dtype)
        floating = signatures.is_floating(dtype)
        integral = dtype[0] == "const" and dtype[1] not in FLOATS and dtype[1] != "bool"
        if conversion == "bool":
            return text if ctx.kind(tensor) in BOOL_KINDS else f"({text} != 0)"  # an atom: it sits in an expression
        if conversion == "int":
            if floating:
                return f"{text}.trunc()"
            if integral:
                return text
            raise DeclineError("dtype-unknown", f"cannot tell whether `{ctx.excerpt(tensor, 30)}` is floating (int() truncates it) or integral")
        return text  # item() and float(): the same value, as a 0-d tensor

    def _check_use(self, ctx: FixContext, signatures: Signatures, operation: ast.BinOp, operand: ast.expr, value_dtype: tuple) -> None:
        """`number op other` must give the same dtype with the 0-d tensor in place of the number.

        A Python number takes the dtype of a floating `other`. So does a 0-d tensor when `other`
        has dimensions, but against another 0-d tensor the two promote (0-d float64 * 0-d float32
        is float64). Without rank facts, the value must be integral (a float `other` wins either
        way) or provably of `other`'s dtype (`s = h.abs().max().item(); h / s`)."""
        other = operation.right if operation.left is operand else operation.left
        if ctx.kind(other) not in TENSOR_KINDS:
            known = "a Python value" if ctx.kind(other) in (Kind.PY, Kind.PY_SEQ, Kind.NONE) else "not known to be a tensor"
            raise DeclineError("used-as-number", f"it is combined with `{ctx.excerpt(other, 30)}`, which is {known}")
        other_dtype = signatures._norm(signatures.of(other).dtype)
        if value_dtype == other_dtype and value_dtype != UNKNOWN:
            # `x / x.abs().max().item()`: a 0-d tensor of `x`'s own dtype promotes with `x` as the
            # Python number did, whatever that dtype is (int32 + int stays int32, so does int32 +
            # 0-d int32; a float meets a float of its own width).
            if ctx.kind(operation) not in TENSOR_KINDS:
                raise DeclineError("used-as-number", "the arithmetic result is not a tensor")
            return
        if value_dtype == ("const", "int64") and _takes_an_int_as_python_does(ctx, other, other_dtype):
            if ctx.kind(operation) not in TENSOR_KINDS:
                raise DeclineError("used-as-number", "the arithmetic result is not a tensor")
            return
        if not signatures.is_floating(other_dtype):
            raise DeclineError(
                "dtype-unknown",
                f"cannot prove `{ctx.excerpt(other, 30)}` is floating point; with an integer tensor the result dtype could change",
            )
        integral = value_dtype[0] == "const" and value_dtype[1] not in FLOATS
        if not integral and value_dtype != other_dtype:
            raise DeclineError(
                "dtype-mismatch",
                f"the value's dtype may differ from that of `{ctx.excerpt(other, 30)}`: as a 0-d tensor it could promote the result",
            )
        if ctx.kind(operation) not in TENSOR_KINDS:
            raise DeclineError("used-as-number", "the arithmetic result is not a tensor")

    def _check_variable(
        self,
        ctx: FixContext,
        signatures: Signatures,
        function: ast.AST,
        statement: ast.Assign,
        name: str,
        value_dtype: tuple,
        python_float: bool,
        tested: list[ast.If],
        depth: int = 0,
    ) -> list[tuple[ast.expr, str]]:
        """Checks every use; returns the uses that go through Python arithmetic first (`s + eps`)
        with their tensor form, and adds to `tested` the `if`s whose test compares the number.

        A use that binds another local (`t = s * 2 + 1`), or the same name again on the next line
        of the block (`s = max(s, 1e-6)`), makes that binding a 0-d tensor too, whose uses are
        checked the same way (`depth` bounds the chain)."""
        uses = _uses_of_binding(ctx, function, statement, name)
        if not uses:
            raise DeclineError("unused", f"`{name}` is never used")
        chains: list[tuple[ast.expr, str]] = []
        for use in uses:
            steps, problem = _python_steps(ctx, signatures, use, value_dtype)
            end: ast.expr = steps[-1] if steps else use
            parent = ctx.parent(end)
            if not steps and _python_choice(ctx, parent, end):
                # `denom = total if self.normalize_length else batch_size`: the choice is made by
                # Python as before, and where it picks the number, the tensor goes on in its place
                assert isinstance(parent, ast.IfExp)
                end, parent = parent, ctx.parent(parent)
            binding = _binds_a_name(ctx, end)
            if binding is not None and depth < _MAX_LOCAL_CHAIN:
                text, bound_dtype, bound_python_float = _bound_form(ctx, signatures, use, steps, problem, name, use, value_dtype, python_float, exact_int=False)
                if text != name:
                    chains.append((end, text))
                target = binding.targets[0].id  # type: ignore[attr-defined]
                chains += self._check_variable(ctx, signatures, function, binding, target, bound_dtype, bound_python_float, tested, depth + 1)
                continue
            branch = None if steps else _tested_branch(ctx, function, use)
            if branch is not None:
                # `if n > 0:`: the 0-d tensor compared as Python compares the number (below), and
                # the `if` left for the Where fixer, which the caller makes sure can rewrite it
                tested.append(branch)
                if not _compares_exactly_as_is(value_dtype, parent):  # type: ignore[arg-type]
                    chains.append((use, f"{name}.double()"))
                continue
            indexed = None if steps else index_use(ctx, function, use, name, value_dtype)
            if indexed is not None:  # `x[n]`, `x[n] = v`: a one-element index instead
                chains += indexed
                continue
            if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC)):
                # quoted code rather than a line number: earlier fixes in the file move lines
                context = ctx.excerpt(parent, 40) if parent is not None else name
                raise DeclineError("used-as-number", f"`{name}` is used where a tensor would not do (in `{context}`)")
            text = self._into_arithmetic(ctx, signatures, use, steps, problem, parent, use, name, value_dtype, python_float)
            if _reflected_division(parent, end) and any(isinstance(n, ast.Name) and n.id == name for n in walk(parent.right)):
                raise DeclineError("used-as-number", f"`{ctx.excerpt(parent, 40)}` divides by an expression of `{name}` itself")
            end, text = _as_python_divides(ctx, parent, end, text, None if steps else name)
            if text != name:
                chains.append((end, text))
        return chains

    def _into_arithmetic(
        self,
        ctx: FixContext,
        signatures: Signatures,
        start: ast.expr,
        steps: _Steps,
        problem: str | None,
        operation: ast.BinOp,
        tensor: ast.expr,
        base: str,
        value_dtype: tuple,
        python_float: bool = False,
    ) -> str:
        """The number (`base`, after its Python `steps`) as an operand of tensor arithmetic. Where
        the other operand is a named floating tensor, Python's float64 number is rounded once to
        that tensor's dtype, as the operation itself rounded the Python number: exact whatever the
        value's own dtype (`(n.double() / 2).to(x.dtype)`). Otherwise the value keeps its own
        dtype, which must then give the result the dtype it had (`_check_use`)."""
        if not steps:
            try:
                self._check_use(ctx, signatures, operation, start, value_dtype)
            except DeclineError as declined:
                # `x * t.item()` with a float64 `t` and a float32 `x`: Python rounded the number to
                # `x`'s dtype when it met `x`; rounding the 0-d tensor to it first is the same (with
                # `x`'s dtype unknown, `_meeting_dtype` names it as dynamo settles it while tracing).
                other = operation.right if operation.left is start else operation.left
                target = None
                if declined.key == "dtype-mismatch":
                    target = _meeting_dtype(ctx, signatures, other)
                elif declined.key == "dtype-unknown" and _meeting_literal(operation, value_dtype, python_float) is not None:
                    target = _meeting_dtype(ctx, signatures, other, _meeting_literal(operation, value_dtype, python_float))
                if target is None:
                    raise
                return f"{base}.to({target})"
            return base
        end = steps[-1]
        other = operation.right if operation.left is end else operation.left
        own_dtype: DeclineError | None = None
        if problem is None:
            try:
                self._check_use(ctx, signatures, operation, end, value_dtype)
                return _chain_text(ctx, start, steps, tensor, base, value_dtype)
            except DeclineError as declined:
                own_dtype = declined
        target = _meeting_dtype(ctx, signatures, other, _meeting_literal(operation, value_dtype, steps.float_result or python_float))
        if target is not None:
            return _chain_text(ctx, start, steps, tensor, base, value_dtype, back=target)
        if own_dtype is not None:
            raise own_dtype
        raise DeclineError("python-arithmetic", f"{problem}, and `{ctx.excerpt(other, 30)}` is not a tensor known to be floating, whose dtype it could take")


_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _bound_selection_count(ctx: FixContext, function: ast.AST, node: ast.expr) -> tuple[SelectionCount | None, ast.Assign | None]:
    """`valid = x[m]` whose name is read once, by a count later in the same block
    (`n = valid.size(0)`, `len(valid)`): the count of that selection, and the binding to remove.
    The mask is evaluated where the count is instead of where the selection was: it must be pure,
    and what runs between may only bind other names to pure values."""
    selection = selection_of(ctx, node, trusted=True)
    binding = ctx.parent(node)
    if selection is None or not (
        isinstance(binding, ast.Assign) and binding.value is node and len(binding.targets) == 1 and isinstance(binding.targets[0], ast.Name)
    ):
        return None, None
    name = binding.targets[0].id
    stores = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    reads = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    if len(stores) != 1 or len(reads) != 1:
        return None, None
    found = counted_by(ctx, reads[0])
    block = ctx.block_of(binding)
    reader = ctx.statement_of(reads[0])
    if found is None or found[1] or not any(s is reader for s in block):
        return None, None  # not a row count, or not later in the same block
    start = next(i for i, s in enumerate(block) if s is binding)
    end = next(i for i, s in enumerate(block) if s is reader)
    read = {n.id for n in walk(node) if isinstance(n, ast.Name)}
    for between in block[start + 1 : end]:
        targets = between.targets if isinstance(between, ast.Assign) else []
        if not targets or not all(isinstance(t, ast.Name) and t.id not in read for t in targets):
            return None, None
        check_pure(ctx, between.value, f"`{ctx.excerpt(between, 40)}` (the mask would now be evaluated after it)")  # type: ignore[attr-defined]
    if end <= start or any(_may_change_tensors(ctx, n) for n in walk(reader)):  # type: ignore[arg-type]
        return None, None  # the reading statement may change what the mask reads before the count
    check_pure(ctx, selection.mask, "the mask (now evaluated where the selection is counted)")
    return SelectionCount(found[0], selection.mask, selection.tensor), binding


def _may_change_tensors(ctx: FixContext, node: ast.AST) -> bool:
    """A call that may change a tensor in place: an in-place method (`t.clamp_()`), or a call of
    anything but torch's functions, builtins and a tensor's own (not in-place) methods."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if is_in_place_call(node):
        return True
    if isinstance(func, ast.Attribute) and ctx.kind(func.value) in TENSOR_KINDS:
        return False
    name = ctx.qualname(func) or ""
    return not name.startswith(("torch.", "builtins.", "math."))


def _hoist_name(ctx: FixContext, function: ast.AST, call: ast.expr, tensor: ast.expr) -> str:
    """A fresh name for the tensor of `name = <tensor>.item()` (Python steps after it allowed), to
    bind it first: evaluated once, then checked and reshaped. Only where the tensor is what the
    statement evaluates first (the steps' other operands are Python numbers: read earlier or later,
    the same), so binding it one statement earlier changes no order."""
    statement = ctx.statement_of(call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        raise _not_one_value(ctx, tensor)
    node: ast.AST = call
    while node is not statement.value:
        parent = ctx.parent(node)
        if not (isinstance(parent, ast.BinOp) and parent.left is node):
            raise _not_one_value(ctx, tensor)
        node = parent
    taken = ctx.remember(("names-in-file",), lambda: {n.id for n in walk(ctx.tree) if isinstance(n, ast.Name)} | set(ctx.index.top_level_names))
    base = f"{statement.targets[0].id}_value"
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    return name


def _zero_d_of_name(ctx: FixContext, tensor: ast.expr, name: str) -> str:
    """`_zero_d` for the tensor bound to `name` first (a copy unless the tensor is fresh)."""
    snapshot = f"{name}.detach()" if ctx.kind(tensor) not in BOOL_KINDS else name
    if not is_fresh(ctx, tensor):
        snapshot += ".clone()"
    return checked_or_original(f"{snapshot}.reshape(())", call_text(ONE_VALUE, name), f"{ctx.torch_name()}.as_tensor({name}.item())")


def _hoisted(
    ctx: FixContext, function: ast.AST, end: ast.expr, tensor: ast.expr, name: str, replacement: str
) -> dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel]:
    """The statement `target = <end>` as two: `name = <tensor>`, then `target = <replacement>`."""
    statement = ctx.statement_of(end)
    if not (isinstance(statement, ast.Assign) and statement.value is end):
        raise _not_one_value(ctx, tensor)
    line = ctx.cst_node(function, statement, cst.SimpleStatementLine)  # type: ignore[arg-type]
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
        raise DeclineError("no-cst-match", "the assignment shares its line with other statements")
    value = cst.parse_expression(f"({ctx.code(tensor)})" if "\n" in ctx.code(tensor) else ctx.code(tensor))
    first = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)], leading_lines=line.leading_lines)
    second = line.with_changes(body=[line.body[0].with_changes(value=cst.parse_expression(replacement))], leading_lines=())
    return {line: cst.FlattenSentinel([first, second])}


def _reflected_division(operation: ast.BinOp, number: ast.expr) -> bool:
    """`number / tensor`: Python computes it as `tensor.reciprocal() * number`."""
    return isinstance(operation.op, ast.Div) and operation.left is number


def _as_python_divides(ctx: FixContext, operation: ast.BinOp, number: ast.expr, text: str, value: str | None = None) -> tuple[ast.expr, str]:
    """The node to replace and its text, for the number's tensor form `text` as an operand of
    `operation`. A Python number divided by a tensor is `Tensor.__rtruediv__`, which multiplies
    by the tensor's reciprocal (rounding twice); a 0-d tensor would divide directly (rounding
    once, so the last bit can differ): the rewrite writes out what Python did. A tensor divided
    by a Python number is, on CUDA, a product with the reciprocal of the number's float64 value
    (measured on an H200: 22 of 30 quotients by a 0-d tensor differed): where the number's own
    `value` is at hand (the number itself, no Python steps before the division), a helper does
    the same there."""
    if _reflected_division(operation, number):
        return operation, f"({ctx.atom(operation.right)}.reciprocal() * {text})"
    if value is not None and isinstance(operation.op, ast.Div) and operation.right is number and ctx.kind(operation.left) in TENSOR_KINDS:
        # not where `x` reads the number too (its own rewrite would sit inside this one), nor inside
        # an `if`: the Where fixer may have to rewrite that branch, and it takes only tensor
        # operations it knows (there the quotient may differ on CUDA in its last bit)
        names = {n.id for n in walk(number) if isinstance(n, ast.Name)}
        in_branch = any(isinstance(a, (ast.If, ast.IfExp)) for a in ctx.ancestors(operation))
        if not in_branch and not any(isinstance(n, ast.Name) and n.id in names for n in walk(operation.left)):
            return operation, call_text(DIVIDE_BY_NUMBER, ctx.code(operation.left), text, value)
    return number, text


_MAX_LOCAL_CHAIN = 4  # locals bound from locals (`s = t.item(); u = s * 2; v = max(u, 1)`)
_MAX_HELPER_DEPTH = 2  # helpers a number is returned through (`_a` returns `t.item()`, `_b` returns `_a(x)`)


def _helper_calls(ctx: FixContext, helper: Function) -> list[ast.Call]:
    """The calls of `helper`, a private function (a module-level `_name`, or one nested in
    another function), each in a function of its own: every reference to its name in its scope
    must be such a call (passed elsewhere or rebound, it could be called where a number is
    needed). Declines with the reason otherwise."""
    parent = ctx.parent(helper)
    private = isinstance(parent, ast.Module) and helper.name.startswith("_") and not helper.name.startswith("__")
    if not (private or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))):
        raise DeclineError("used-as-number", f"`{helper.name}` returns the number, and it is not private: another module may call it and expect a number")
    if helper.decorator_list or isinstance(helper, ast.AsyncFunctionDef):
        raise DeclineError("used-as-number", f"`{helper.name}` returns the number, and it is decorated or async")
    assert parent is not None  # a module or a function, checked above
    if _bound_elsewhere(parent, helper):
        raise DeclineError("used-as-number", f"`{helper.name}` returns the number, and its name is bound elsewhere too (a parameter, another def, an import)")
    returns = [n for n in own_nodes(helper) if isinstance(n, ast.Return)]
    if len(returns) != 1:
        raise DeclineError("used-as-number", f"`{helper.name}` returns the number on one path of several")
    sites: list[ast.Call] = []
    callers: set[int] = set()
    for node in walk(parent):
        if not (isinstance(node, ast.Name) and node.id == helper.name):
            continue
        call = ctx.parent(node)
        if not (isinstance(node.ctx, ast.Load) and isinstance(call, ast.Call) and call.func is node):
            raise DeclineError("used-as-number", f"`{helper.name}` returns the number, and its name is used other than in a call")
        caller = ctx.function_of(call)
        if caller is None or caller is helper or id(caller) in callers:
            raise DeclineError("used-as-number", f"`{helper.name}` returns the number, and is called at module level, by itself, or twice in one function")
        callers.add(id(caller))
        sites.append(call)
    if not sites:
        raise DeclineError("used-as-number", f"`{helper.name}` returns the number, and is never called")
    return sites


def _bound_elsewhere(scope: ast.AST, helper: Function) -> bool:
    """Whether the helper's name is bound anywhere in `scope` other than by its own `def`: then a
    read of the name may mean something else (a parameter `_amax`, a nested `def _amax`)."""
    name = helper.name
    for node in walk(scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name and node is not helper:
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
    return False


def _uses_of_binding(ctx: FixContext, function: ast.AST, statement: ast.stmt, name: str) -> list[ast.Name]:
    """The reads of the value `statement` binds to `name`: every later read where it is the only
    binding of `name`; where every binding of the name is a `name = ...` of the same block, on
    straight-line code (`s = t.item()` then `s = max(s, 1e-6)`), the reads up to the next one's
    value. Any other second binding (in a branch or a loop, a loop target, `+=`) declines."""
    stores = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    until: tuple[int, int] | None = None
    if len(stores) != 1:
        block = _block_of(function, statement)
        binders = [s for s in block if _straight_binding(s, name)] if block is not None else []
        if block is None or _inside_loop(function, statement) or len(binders) != len(stores):
            covered = _covered_reads(ctx, function, statement, name, len(stores))
            if covered is None:
                raise DeclineError("reassigned", f"`{name}` is assigned more than once in the function, not only by `{name} = ...` lines of one block")
            return covered
        later = binders[binders.index(statement) + 1 :]  # type: ignore[arg-type]
        if later:
            value = later[0].value  # type: ignore[attr-defined]
            until = (value.end_lineno or value.lineno, value.end_col_offset or 0)
    own = {id(n) for n in walk(statement)}
    return [
        n
        for n in walk(function)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno >= statement.lineno and id(n) not in own
        and (until is None or (n.lineno, n.col_offset) < until)
    ]


def _covered_reads(ctx: FixContext, function: ast.AST, statement: ast.stmt, name: str, stores: int) -> list[ast.Name] | None:
    """The reads of what `statement` binds where every binding of `name` is a `name = ...` that
    only the rest of its own block reads (ALBEF's two loops, each drawing `neg_idx` and reading
    it on the next lines): each read must come after a binding in the block of that binding,
    with no other binding between, and not where a loop around the read could bring another
    binding's value round again. None when some read is not so covered."""
    binders = [
        s for s in walk(function) if isinstance(s, ast.stmt) and _straight_binding(s, name)
    ]
    if len(binders) != stores:
        return None
    mine: list[ast.Name] = []
    deferred = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for read in (n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
        around = list(_ancestors_within(ctx, function, read))
        if any(isinstance(a, deferred) for a in around):
            return None  # a closure or comprehension may run after another binding
        cover = _covering_binding(ctx, function, read, around, binders)
        if cover is None:
            return None
        if cover is statement:
            mine.append(read)
    return mine


def _covering_binding(ctx: FixContext, function: ast.AST, read: ast.Name, around: list[ast.AST], binders: list[ast.stmt]) -> ast.stmt | None:
    """The binding whose value `read` sees for sure: the last binding before it in the innermost
    block holding both, with no binding inside the statement of that block that holds the read
    (a nested `if` could rebind on one path), and none inside a loop holding the read that the
    binding is outside of."""
    best: tuple[int, ast.stmt] | None = None
    for binder in binders:
        block = _block_of(function, binder)
        if block is None:
            continue
        index = next(i for i, s in enumerate(block) if s is binder)
        for later in block[index + 1 :]:
            if any(n is read for n in walk(later)):
                between = block[index + 1 : block.index(later)]
                if any(b is not binder and any(b is n for s in between for n in walk(s)) for b in binders):
                    break
                if any(b is not binder and any(b is n for n in walk(later)) and b.lineno < read.lineno for b in binders):
                    return None  # rebound on some path inside the statement that holds the read
                depth = sum(1 for _ in _ancestors_within(ctx, function, binder))
                if best is None or depth > best[0]:
                    best = (depth, binder)
                break
    if best is None:
        return None
    cover = best[1]
    for loop in (a for a in around if isinstance(a, (ast.For, ast.AsyncFor, ast.While))):
        if not ctx.contains(loop, cover) and any(b is not cover and ctx.contains(loop, b) for b in binders):
            return None  # another binding in the loop comes round before the read
    return cover


def _ancestors_within(ctx: FixContext, function: ast.AST, node: ast.AST) -> Iterator[ast.AST]:
    """The nodes that contain `node`, up to (not including) `function`."""
    for ancestor in ctx.ancestors(node):
        if ancestor is function:
            return
        yield ancestor


def _block_of(function: ast.AST, statement: ast.stmt) -> list[ast.stmt] | None:
    """The statement list that holds `statement`."""
    for node in walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is statement for s in block):
                return block
    return None


def _inside_loop(function: ast.AST, statement: ast.stmt) -> bool:
    return any(isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and any(s is statement for s in walk(node)) for node in walk(function))


def _straight_binding(statement: ast.stmt, name: str) -> bool:
    """`name = <expression>`: the one form of binding whose reach is the rest of its block."""
    return isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name


def _consumer(ctx: FixContext, parent: ast.AST | None, value: ast.expr) -> str:
    """What takes the number, in words a user recognises (`range`, a list, a format string)."""
    if parent is None:
        return "outside any expression"
    shown = f"`{ctx.excerpt(parent, 40)}`"
    if isinstance(parent, ast.Call) and value is not parent.func:
        return f"passed to `{ctx.excerpt(parent.func, 30)}` ({shown})"
    if isinstance(parent, ast.keyword):
        holder = ctx.parent(parent)
        name = ctx.excerpt(holder.func, 30) if isinstance(holder, ast.Call) else "a call"
        return f"passed as `{parent.arg}=` to `{name}`"
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return f"kept in a {type(parent).__name__.lower()} display ({shown}), whose elements stay what they are"
    if isinstance(parent, (ast.FormattedValue, ast.JoinedStr)):
        return "formatted into a string"
    if isinstance(parent, ast.Compare):
        return f"compared in {shown}, outside an `if` test"
    if isinstance(parent, (ast.Subscript, ast.Slice)):
        return f"as an index or slice bound ({shown})"
    if isinstance(parent, ast.Return):
        return "returned from a function whose callers are not followed this deep"
    if isinstance(parent, ast.Attribute):
        return f"its attribute `.{parent.attr}` is read"
    return f"in {shown}"


def _python_choice(ctx: FixContext, parent: ast.AST | None, arm: ast.expr) -> bool:
    """`parent` is `a if test else b` with `arm` as `a` or `b`, and a test that is not a tensor."""
    return isinstance(parent, ast.IfExp) and arm in (parent.body, parent.orelse) and ctx.kind(parent.test) not in TENSOR_KINDS


def _binds_a_name(ctx: FixContext, node: ast.expr) -> ast.Assign | None:
    """The statement `name = node`, when `node` is the whole value of a one-name assignment."""
    statement = ctx.parent(node)
    if isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement
    return None


def _bound_form(
    ctx: FixContext,
    signatures: Signatures,
    start: ast.expr,
    steps: _Steps,
    problem: str | None,
    base: str,
    tensor: ast.expr,
    value_dtype: tuple,
    python_float: bool,
    exact_int: bool,
) -> tuple[str, tuple, bool]:
    """The tensor form of a name bound to the number after its Python `steps` (`n = t.item() +
    eps`, and a local bound from such a name: `u = n * 2 + 1`, `n = max(n, 1e-6)`), with the dtype
    and Python type that value then has. Where Python holds a float64 from the first step on (a
    floating value narrower than float64, or `t.item() + eps` with `t` of an unknown or integer
    dtype, where every real value becomes the same float64 as `t.double()`), the steps are done on
    `base.double()` and the binding stays float64."""
    if steps and (_held_as_python_float(signatures, value_dtype) or (problem is not None and _first_step_makes_a_float(ctx, start, steps, exact_int=exact_int))):
        base, value_dtype, python_float = f"{base}.double()", ("const", "float64"), True
        steps, problem = _python_steps(ctx, signatures, start, value_dtype)
    if not steps:
        return base, value_dtype, python_float
    if problem is not None:
        raise DeclineError("python-arithmetic", problem)
    return _chain_text(ctx, start, steps, tensor, base, value_dtype), value_dtype, python_float or steps.float_result


def _held_as_python_float(signatures: Signatures, value_dtype: tuple) -> bool:
    """A floating value narrower than float64 (`t.item()` of a float32 `t`): Python holds it as a
    float64 and does its arithmetic in float64. Bound to a name after such steps (`n = t.item() *
    0.1`), the result must stay float64 too: rounded back to float32 at the binding, it would meet
    a float64 tensor later with a value Python never had (measured: 154 of 200 products differed)."""
    return signatures.is_floating(value_dtype) and value_dtype != ("const", "float64")


def _first_step_makes_a_float(ctx: FixContext, start: ast.expr, steps: _Steps, exact_int: bool) -> bool:
    """Whether the first Python step turns the value into a float by adding, subtracting or
    multiplying a float (`t.item() + eps`): Python rounds the value to float64 once, there, as
    `.double()` does. Integer steps first (`n * 3 + eps`) are exact in Python at any size but not
    in float64; so is an integer divided (`n / 2`, correctly rounded from the exact quotient),
    which float64 matches only for integers it holds exactly (`exact_int`: a count)."""
    first = steps[0]
    if not isinstance(first, ast.BinOp):
        return False
    if isinstance(first.op, ast.Div):
        return exact_int
    other = first.right if first.left is start else first.left
    function = ctx.function_of(other)
    # known to be a float: a name of unknown type may hold an int, and int + int stays an int
    return function is not None and value_type(ctx, other, function) == FLOAT


def _python_number(ctx: FixContext, signatures: Signatures, node: ast.expr) -> str | None:
    """"int" or "float" for a Python number (py_types: a literal, a size, a name typed or inferred
    so; a value of unknown type that is no tensor counts as "float"), None otherwise."""
    function = ctx.function_of(node)
    known = value_type(ctx, node, function) if function is not None else None
    if known in (INT, BOOL):
        return "int"
    if known == FLOAT:
        return "float"
    if isinstance(node, ast.Attribute) and signatures.of(node) == Sig(UNKNOWN, SCALAR_SHAPE):
        return "float"  # `self.eps`: a Python value set in __init__
    if isinstance(node, (ast.Name, ast.Attribute)) and ctx.kind(node) is Kind.PY:
        return "float"  # a Python value in arithmetic with a number is a number (or Python raises)
    return None


def _at_least_positive(ctx: FixContext, node: ast.expr) -> bool:
    """`max(n, c)` (or `max(c, n)`) with a literal `c > 0`: never 0, so dividing by it cannot raise
    ZeroDivisionError (`loss / max(num_pos, 1)`; a NaN `n` gives NaN in Python and in
    torch.clamp alike, without an error)."""
    if not (isinstance(node, ast.Call) and ctx.qualname(node.func) == "builtins.max" and len(node.args) == 2):
        return False
    # either order: max(c, n) is c or more, and c itself for a NaN n
    bound = node.args[1] if isinstance(node.args[1], ast.Constant) else node.args[0]
    return isinstance(bound, ast.Constant) and isinstance(bound.value, (int, float)) and not isinstance(bound.value, bool) and bound.value > 0


def _nonzero_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value != 0


def _tests_a_choice_of_literals(ctx: FixContext, node: ast.expr) -> bool:
    """`node` is in the test of `a if test else b` with number literals `a` and `b`."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.IfExp):
            return ctx.contains(ancestor.test, node) and _literal_type(ancestor.body) is not None and _literal_type(ancestor.orelse) is not None
        if isinstance(ancestor, ast.stmt):
            return False
    return False


def _literal_type(node: ast.expr) -> type | None:
    """int or float for a number literal (`2`, `-0.5`), None for anything else (bools too)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return type(node.value) if isinstance(node, ast.Constant) and type(node.value) in (int, float) else None


def _cst_of(ctx: FixContext, function: ast.AST, node: ast.expr) -> cst.CSTNode:
    kinds: dict[type[ast.AST], type[cst.CSTNode]] = {ast.BinOp: cst.BinaryOperation, ast.Name: cst.Name, ast.Subscript: cst.Subscript, ast.IfExp: cst.IfExp}
    return ctx.cst_node(function, node, kinds.get(type(node), cst.Call))  # type: ignore[arg-type]


_INT64_OR_FLOAT_REDUCTIONS = frozenset({"sum", "nansum", "prod", "mean", "nanmean", "count_nonzero"})


def _takes_an_int_as_python_does(ctx: FixContext, other: ast.expr, other_dtype: tuple) -> bool:
    """An int64 0-d tensor (a count) in `+ - * /` with `other` gives the dtype a Python int gives,
    unless `other` is a 0-d integer tensor of another dtype (0-d int32 + 0-d int64 is int64; + a
    Python int, int32). So `other` must be known int64, bool or floating, or a reduction whose
    result is (integer sums and products are int64, means are floating) without a `dtype=`."""
    if other_dtype[0] == "const" and other_dtype[1] in (*FLOATS, "int64", "bool"):
        return True
    if not (isinstance(other, ast.Call) and not any(k.arg == "dtype" for k in other.keywords)):
        return False
    name = ctx.qualname(other.func) or ""
    if isinstance(other.func, ast.Attribute) and not name.startswith("torch."):
        return other.func.attr in _INT64_OR_FLOAT_REDUCTIONS and ctx.kind(other.func.value) in TENSOR_KINDS
    return name.startswith("torch.") and name.rsplit(".", 1)[1] in _INT64_OR_FLOAT_REDUCTIONS


def _number_literal(value_dtype: tuple, float_result: bool = False) -> str | None:
    """A Python number of the type the value is in Python (`1.0`, `1`), after steps that may make
    it a float; None when that type is not known (a bool, or a value of unknown dtype)."""
    if float_result or (value_dtype[0] == "const" and value_dtype[1] in FLOATS):
        return "1.0"
    return "1" if value_dtype[0] == "const" and value_dtype[1] != "bool" else None


def _meeting_literal(operation: ast.BinOp, value_dtype: tuple, float_result: bool) -> str | None:
    """The Python number type that decides how the number meets the other operand: for `/` any
    number will do (true division of an integer tensor by an int or a float alike is computed in
    the default float dtype, and a floating tensor takes either type alike), so a value of unknown
    dtype is no obstacle there (`x / max(n.item(), 1)`)."""
    return "1.0" if isinstance(operation.op, ast.Div) else _number_literal(value_dtype, float_result)


# Floating dtypes that take a Python number at their own width (float16 and bfloat16 compute, and
# take numbers, at float32: measured on torch 2.13 for + - * /).
_FULL_PRECISION = frozenset({"float32", "float64"})


def _meeting_dtype(ctx: FixContext, signatures: Signatures, node: ast.expr, number: str | None = "1.0") -> str | None:
    """The dtype a Python number takes when it meets tensor `node` in arithmetic, as code: any
    number takes the dtype of a float32 or float64 tensor (`torch.float32` when known). Otherwise
    `_graphmend_number_dtype(x, 1.0)` (or `1` for an int `number`), which dynamo settles while
    tracing: a float16 or bfloat16 `x` takes it at float32, an integer `x` meets a float in the
    default float dtype and an int in its own (`torch.result_type` itself breaks the graph). None
    when the number's type (`number` None) or the tensor's dtype cannot be named, or `node` is not
    a name (evaluating it twice could cost)."""
    if ctx.kind(node) not in TENSOR_KINDS:
        return None
    dtype = signatures._norm(signatures.of(node).dtype)
    if dtype[0] == "const" and dtype[1] in _FULL_PRECISION:
        return f"{ctx.torch_name()}.{dtype[1]}"
    if signatures.is_floating(dtype):
        node = _floating_receiver(node)  # `loss.sum()` has the dtype of a floating `loss`: ask that
    reference = isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))
    if not reference:
        return None
    if signatures.is_floating(dtype):
        # float16 and bfloat16 take a Python number at float32, not at their own dtype: the helper
        # says which (a number of either type meets a floating tensor alike)
        return call_text(NUMBER_DTYPE, ctx.code(node), "1.0")
    return None if number is None else call_text(NUMBER_DTYPE, ctx.code(node), number)


# Reductions that keep a floating tensor's dtype (without a `dtype=` keyword).
_DTYPE_KEEPING_REDUCTIONS = frozenset({"sum", "nansum", "mean", "nanmean", "amax", "amin", "max", "min", "norm", "logsumexp"})


def _floating_receiver(node: ast.expr) -> ast.expr:
    """`x` of `x.sum()`, `x.mean()` (no dtype keyword), else `node`: for a floating `x` the result
    has `x`'s dtype, so a number meets either alike, and `x` is cheap to read again."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DTYPE_KEEPING_REDUCTIONS:
        if not any(k.arg == "dtype" for k in node.keywords):
            return node.func.value
    return node


class _Steps(list[ast.expr]):
    """The Python operations a number goes through, innermost first, and which of them are
    divisions of an integer (Python's ZeroDivisionError message differs from a float's)."""

    def __init__(self) -> None:
        super().__init__()
        self.int_divisions: set[int] = set()  # ids of the divisions whose dividend is a Python int
        self.float_result = False  # a step makes the number a Python float whatever it started as


def _python_steps(ctx: FixContext, signatures: Signatures, start: ast.expr, value_dtype: tuple) -> tuple[_Steps, str | None]:
    """The Python arithmetic the number goes through before it meets a tensor, innermost first:
    `t.item() + eps`, `max(t.item(), 1)`. Kept as tensor arithmetic only where it computes the
    same number: an integer stays exact with integers (+, -, *, max, min); a floating value is
    computed in float64, as Python does, and rounded once at the end. Never with the number as a
    divisor (Python raises ZeroDivisionError at 0); a divisor that may be 0 is guarded so that
    Python's error is kept (`_graphmend_float_divisor`). The second value says why the steps would
    not compute the same number in the value's own dtype (None: they do); float64 and rounding to
    the dtype of the tensor the result meets still may (`_into_arithmetic`)."""
    floating = signatures.is_floating(value_dtype)
    integral = value_dtype[0] == "const" and value_dtype[1] not in FLOATS and value_dtype[1] != "bool"
    steps = _Steps()
    problem: str | None = None
    python_float = floating  # whether Python holds a float at this step (an int divides by 0 with another message)
    node: ast.expr = start
    while len(steps) < 8:
        parent = ctx.parent(node)
        if isinstance(parent, ast.BinOp) and type(parent.op) in _SYMBOLS:
            other = parent.right if parent.left is node else parent.left
            kind = _python_number(ctx, signatures, other)
            if kind is None:
                break  # a tensor, or not a number: the use itself is checked next
            if isinstance(parent.op, ast.Div) and parent.right is node and not _at_least_positive(ctx, node):
                raise DeclineError("python-arithmetic", f"`{ctx.excerpt(other, 30)}` is divided by the number in Python, which raises ZeroDivisionError when it is 0 (a tensor would give inf)")
            if isinstance(parent.op, ast.Div) and not _nonzero_literal(other) and not (python_float or kind == "float"):
                if not integral:
                    raise DeclineError("python-arithmetic", f"`{ctx.excerpt(parent, 40)}` divides a number that may be an integer or a float: at 0 Python's error message depends on which")
                steps.int_divisions.add(id(parent))
            python_float = python_float or kind == "float" or isinstance(parent.op, ast.Div)
            steps.float_result = steps.float_result or kind == "float" or isinstance(parent.op, ast.Div)
        elif isinstance(parent, ast.Call) and ctx.qualname(parent.func) in ("builtins.max", "builtins.min"):
            # max(n, c) is torch.clamp(n, min=c) for every n, NaN included; max(c, n) is c for a NaN
            # n, so the number may come second only when it is an integer (a count: never NaN)
            second = integral and not python_float and len(parent.args) == 2 and parent.args[1] is node
            if len(parent.args) != 2 or parent.keywords or (parent.args[0] is not node and not second):
                raise DeclineError("python-arithmetic", f"`{ctx.excerpt(parent, 40)}`: only max/min of the number then one Python number keeps its meaning as torch.clamp (max(c, nan) is c)")
            kind = _python_number(ctx, signatures, parent.args[0] if second else parent.args[1])
            if kind is None:
                break
        else:
            break
        if not (floating or integral):
            problem = problem or f"`{ctx.excerpt(parent, 40)}` is Python arithmetic on a number of unknown dtype"
        if integral and (kind == "float" or (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div))):
            problem = problem or f"`{ctx.excerpt(parent, 40)}` turns an integer into a Python float (float64)"
        steps.append(parent)
        node = parent
    return steps, problem


def _chain_text(
    ctx: FixContext, call: ast.expr, steps: _Steps, tensor: ast.expr, base: str, value_dtype: tuple, back: str | None = None
) -> str:
    """The steps as tensor operations on `base` (the 0-d tensor): `max`/`min` -> `torch.clamp`;
    a floating value is taken in float64 and the result brought back to its own dtype, or to
    `back` (the dtype of the tensor it meets) when given."""
    torch = ctx.torch_name()
    already_double = value_dtype == ("const", "float64")  # float64 steps are Python's own: no round trip
    doubled = back is not None or (not already_double and (value_dtype[0] != "const" or value_dtype[1] in FLOATS))
    arithmetic = back is not None or any(isinstance(s, ast.BinOp) for s in steps)
    if back is not None:
        base = f"{base}.double()"
    elif doubled and arithmetic:
        if value_dtype[0] == "const":
            back = f"{torch}.{value_dtype[1]}"
        elif isinstance(tensor, (ast.Name, ast.Attribute)):
            back = f"{ctx.code(tensor)}.dtype"
        else:
            raise DeclineError("used-as-number", f"the Python arithmetic on `{ctx.excerpt(tensor, 30)}` would need its dtype, which is not known")
        base = f"{base}.double()"
    chain = {id(call): base}
    for step in steps:
        if isinstance(step, ast.BinOp):
            left = chain.get(id(step.left)) or ctx.atom(step.left)
            right = chain.get(id(step.right)) or ctx.atom(step.right)
            if isinstance(step.op, ast.Div) and not _nonzero_literal(step.right) and not _at_least_positive(ctx, step.right):  # Python raised ZeroDivisionError at 0
                right = call_text(INT_DIVISOR if id(step) in steps.int_divisions else FLOAT_DIVISOR, ctx.code(step.right))
            chain[id(step)] = f"({left} {_SYMBOLS[type(step.op)]} {right})"
        else:
            assert isinstance(step, ast.Call)
            bound = "min" if ctx.qualname(step.func) == "builtins.max" else "max"
            value, limit = (step.args[0], step.args[1]) if id(step.args[0]) in chain else (step.args[1], step.args[0])
            chain[id(step)] = f"{torch}.clamp({chain[id(value)]}, {bound}={ctx.code(limit)})"
    text = chain[id(steps[-1])]
    return f"{text}.to({back})" if doubled and arithmetic else text


_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def _tested_branch(ctx: FixContext, function: ast.AST, use: ast.expr, exact_operand: Callable[[ast.expr], bool] | None = None) -> ast.If | None:
    """The `if` of `function` whose test (or its negation, or a part of its `and`/`or`) compares
    the number with number literals: `if n > 0:`, `if not 0 < n <= 1:`, `if ready and n > 0:`.
    Python compares the number exactly; the 0-d tensor compares the same when the literals are
    integers its dtype holds or, in float64 (see `_compares_exactly_as_is`), floats and integers
    below 2**53. `exact_operand` accepts other operands the caller knows compare exactly (a
    count against a size: two integers)."""
    compare = ctx.parent(use)
    if not isinstance(compare, ast.Compare) or not all(isinstance(op, _COMPARISONS) for op in compare.ops):
        return None
    operands = [compare.left, *compare.comparators]
    if sum(o is use for o in operands) != 1:
        return None
    for operand in operands:
        if operand is use or python_float_name(ctx, function, operand) or (exact_operand is not None and exact_operand(operand)):
            continue
        if not (is_small_int(operand) or is_float_literal(operand)) or abs(literal_value(operand)) >= EXACT_DOUBLE_INT:
            return None
    node: ast.AST = compare
    branch = ctx.parent(node)
    while (isinstance(branch, ast.UnaryOp) and isinstance(branch.op, ast.Not)) or isinstance(branch, ast.BoolOp):
        node, branch = branch, ctx.parent(branch)
    if isinstance(branch, ast.If) and branch.test is node and ctx.function_of(branch) is function:
        return branch
    return None


def _size_operand(ctx: FixContext, signatures: Signatures) -> Callable[[ast.expr], bool]:
    """Whether an operand compared with a count is a Python int (a size: `y.numel()`,
    `x.shape[0] * 2`), which an int64 0-d tensor compares exactly as Python compared the count."""
    return lambda operand: _python_number(ctx, signatures, operand) == "int"


def _compares_exactly_as_is(value_dtype: tuple, compare: ast.Compare) -> bool:
    """A 0-d float64 tensor compares with Python numbers exactly, and one of an integer dtype with
    integer literals; anything else (a narrower float, which torch would compare in its own
    precision, or a float operand, which torch would round to the tensor's dtype) is compared in
    float64, which holds every float16/32/64 value, Python's floats, and integers below 2**53."""
    if value_dtype == ("const", "float64"):
        return True
    integral = value_dtype in (("const", "int64"), ("const", "int32"))  # both hold the small literals
    return integral and all(is_small_int(o) for o in [compare.left, *compare.comparators] if not isinstance(o, ast.Name))
