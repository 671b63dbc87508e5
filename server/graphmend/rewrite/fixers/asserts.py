"""GM201: `assert t.item() <= n, msg` -> `assert t <= n, msg` (issue 8).

Dynamo cannot take `.item()` without breaking, but it traces an `assert` on a tensor condition
into the graph as a runtime check (taxonomy §3: a data-dependent assert does not break). So the
assert compares the 0-d tensor itself. Eagerly nothing changes: the tensor comparison is a 0-d
bool tensor whose truth is the same, and a failure raises the same AssertionError. Under
torch.compile a failure raises RuntimeError with the message instead, and a floating tensor
compares in its own precision (a Python number is rounded to the tensor's dtype: exact for the
integers sizes are, unless the tensor is half precision): both said in the title, so it is unsafe.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import NON_TENSOR_KINDS
from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety

TITLE = (
    "Assert on the 0-d tensor instead of its Python value (no break; under torch.compile a failure raises "
    "RuntimeError with the message instead of AssertionError)"
)


class AssertScalarFixer:
    codes = frozenset({"GM201"})
    safety = Safety.UNSAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "item" and not call.args):
            raise DeclineError("not-an-assert", "only `t.item()` in an assert's test is rewritten")
        statement = ctx.statement_of(call)
        function = ctx.function_of(call)
        if not isinstance(statement, ast.Assert) or function is None:
            raise DeclineError("not-an-assert", "the value is not tested by an `assert`")
        test = statement.test
        if test is not call:
            if not (isinstance(test, ast.Compare) and any(o is call for o in (test.left, *test.comparators))):
                raise DeclineError("assert-test-shape", "the assert does more than compare the value (`assert t.item() <= n`)")
            for operand in (test.left, *test.comparators):
                if operand is not call and not (isinstance(operand, ast.Constant) or ctx.kind(operand) in NON_TENSOR_KINDS):
                    raise DeclineError("assert-test-shape", f"`{ctx.excerpt(operand, 30)}` is not known to be a Python number")
                if isinstance(operand, ast.Constant) and not isinstance(operand.value, (int, float, bool)):
                    raise DeclineError("assert-test-shape", f"`{ctx.excerpt(operand, 30)}` is not a number")
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in test.ops):
                raise DeclineError("assert-test-shape", "identity and membership tests do not work on tensors")
        target = ctx.cst_node(function, call, cst.Call)
        edits = [ctx.rewrite(function, {target: cst.parse_expression(ctx.atom(call.func.value))})]
        return Fix(finding, TITLE, Safety.UNSAFE, tuple(edits))
