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

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, TENSOR_KINDS
from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..signatures import FLOATS, Signatures, floating_names

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


class ScalarFixer:
    codes = frozenset({"GM201", "GM203"})
    safety = Safety.SAFE
    title = "Keep the value as a 0-d tensor instead of a Python number"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call):
            raise DeclineError("no-node", "could not find the conversion in the source")
        function = ctx.function_of(call)
        if function is None:
            raise DeclineError("not-in-function", "the conversion is not inside a function")
        tensor, conversion = self._operand(ctx, call)
        statement = ctx.statement_of(call)
        signatures = Signatures(ctx, floating_names(ctx, function, statement), at=statement)
        replacement = self._replacement(ctx, tensor, conversion, signatures)
        value_dtype = ("const", "bool") if conversion == "bool" else signatures._norm(signatures.of(tensor).dtype)
        parent = ctx.parent(call)
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC):
            self._check_use(ctx, signatures, parent, call, value_dtype)
        elif isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            self._check_variable(ctx, signatures, function, statement, statement.targets[0].id, value_dtype)
        else:
            raise DeclineError("used-as-number", "the number is used where a tensor would not do (not only in tensor arithmetic)")
        target = ctx.cst_node(function, call, cst.Call)
        edits = [ctx.rewrite(function, {target: cst.parse_expression(replacement)})]
        if replacement.endswith(".trunc()"):
            # int(nan) and int(inf) raise; trunc() carries them on: the only behaviour that changes.
            return Fix(finding, "Keep int(t) as the 0-d tensor t.trunc() (a NaN or infinite t no longer raises)", Safety.UNSAFE, tuple(edits))
        return Fix(finding, self.title, Safety.SAFE, tuple(edits))

    def _operand(self, ctx: FixContext, call: ast.Call) -> tuple[ast.expr, str]:
        if isinstance(call.func, ast.Attribute) and call.func.attr == "item" and not call.args:
            return call.func.value, "item"
        name = ctx.qualname(call.func)
        if name in ("builtins.float", "builtins.int", "builtins.bool") and len(call.args) == 1 and not call.keywords:
            return call.args[0], name.split(".")[1]
        raise DeclineError("conversion", "only .item(), float(), int() and bool() of a tensor are rewritten")

    def _replacement(self, ctx: FixContext, tensor: ast.expr, conversion: str, signatures: Signatures) -> str:
        text = ctx.atom(tensor)
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
            raise DeclineError("dtype-unknown", f"cannot tell whether `{ctx.code(tensor)[:30]}` is floating (int() truncates it) or integral")
        return text  # item() and float(): the same value, as a 0-d tensor

    def _check_use(self, ctx: FixContext, signatures: Signatures, operation: ast.BinOp, operand: ast.expr, value_dtype: tuple) -> None:
        """`number op other` must give the same dtype with the 0-d tensor in place of the number.

        A Python number takes the dtype of a floating `other`. So does a 0-d tensor when `other`
        has dimensions, but against another 0-d tensor the two promote (0-d float64 * 0-d float32
        is float64). Without rank facts, the value must be integral (a float `other` wins either
        way) or provably of `other`'s dtype (`s = h.abs().max().item(); h / s`)."""
        other = operation.right if operation.left is operand else operation.left
        if ctx.kind(other) not in TENSOR_KINDS:
            raise DeclineError("used-as-number", f"it is combined with `{ctx.code(other)[:30]}`, which is not a tensor")
        other_dtype = signatures._norm(signatures.of(other).dtype)
        if not signatures.is_floating(other_dtype):
            raise DeclineError(
                "dtype-unknown",
                f"cannot prove `{ctx.code(other)[:30]}` is floating point; with an integer tensor the result dtype could change",
            )
        integral = value_dtype[0] == "const" and value_dtype[1] not in FLOATS
        if not integral and value_dtype != other_dtype:
            raise DeclineError(
                "dtype-mismatch",
                f"the value's dtype may differ from that of `{ctx.code(other)[:30]}`: as a 0-d tensor it could promote the result",
            )
        if ctx.kind(operation) not in TENSOR_KINDS:
            raise DeclineError("used-as-number", "the arithmetic result is not a tensor")

    def _check_variable(
        self, ctx: FixContext, signatures: Signatures, function: ast.AST, statement: ast.Assign, name: str, value_dtype: tuple
    ) -> None:
        uses = [
            n
            for n in ast.walk(function)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno >= statement.lineno
            and not any(n is t for t in ast.walk(statement))
        ]
        stores = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        if len(stores) != 1:
            raise DeclineError("reassigned", f"`{name}` is assigned more than once in the function")
        if not uses:
            raise DeclineError("unused", f"`{name}` is never used")
        for use in uses:
            parent = ctx.parent(use)
            if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC)):
                # quoted code rather than a line number: earlier fixes in the file move lines
                context = ctx.code(parent)[:40] if parent is not None else name
                raise DeclineError("used-as-number", f"`{name}` is used where a tensor would not do (in `{context}`)")
            self._check_use(ctx, signatures, parent, use, value_dtype)
