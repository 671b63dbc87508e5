"""GM101: `if <tensor test> and <Python test>:` -> `if <Python test> and <tensor test>:`.

pytorch-metric-learning's `DivisorReducer` retries a half-precision sum in float32:

    if torch.isnan(output) and losses.dtype == torch.float16:

Python evaluates the tensor's truth first, so dynamo breaks on every call, though in float32 the
dtype test alone decides. Tested first, the dtype test is known while tracing: where it is false
(or, for `or`, true), the tensor's truth is never asked and the graph does not break; where it
decides nothing, the break stays where it was (so the fix only reduces the break: `full=False`).

The truth of `a and b` is the truth of `b and a` when neither has an effect and neither raises;
the swap then only changes which operands run. So: the test is a branch's (an `if`, `elif` or
`while` test, not a value someone reads); each tensor operand is speculatively evaluable (it now
runs on fewer calls); each Python operand is too (it now runs where it was skipped: `losses.dtype`,
`self.training`, `x is None`, `isinstance(...)`). Operands keep their order within each group.
A tensor operand of several values is not required away: its truth raises ("ambiguous") on
every call that reaches it, so a program in which it has several values never ran that line, and
asking it on fewer calls changes no run that worked.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from .conditions import tensor_logic


class StaticFirstFixer:
    codes = frozenset({"GM101"})
    safety = Safety.SAFE
    narrow = True  # one shape of GM101: its "not my pattern" says less than the general fixers'

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.expr,))
        test = ctx.parent(node) if node is not None else None
        if not isinstance(test, ast.BoolOp) or node not in test.values:
            raise DeclineError("not-an-operand", "the tensor test is not an operand of `and`/`or`")
        holder = ctx.parent(test)
        if not (isinstance(holder, (ast.If, ast.While)) and holder.test is test):
            raise DeclineError("value-read", "the `and`/`or` is not a branch's whole test: its value may be read, and swapping would change it")
        tensors = [value for value in test.values if tensor_logic(ctx, value)]
        statics = [value for value in test.values if not tensor_logic(ctx, value)]
        if not statics:
            raise DeclineError("no-python-test", "every operand is a tensor test: none is known while tracing")
        if test.values[: len(statics)] == statics:
            raise DeclineError("already-first", "the Python tests already come first")
        function = ctx.function_of(test)
        if function is None:
            raise DeclineError("not-in-function", "the test is not inside a function")
        for value in tensors:
            check_pure(ctx, value, f"the tensor test `{ctx.excerpt(value, 30)}`")
        for value in statics:
            check_pure(ctx, value, f"the Python test `{ctx.excerpt(value, 30)}`")
        joiner = " and " if isinstance(test.op, ast.And) else " or "
        reordered = joiner.join(ctx.atom(value) if isinstance(value, (ast.BoolOp, ast.IfExp)) else ctx.code(value) for value in statics + tensors)
        target = ctx.cst_node(function, test, cst.BooleanOperation)
        edit = ctx.rewrite(function, {target: cst.parse_expression(reordered)})
        which = "false" if isinstance(test.op, ast.And) else "true"
        title = (
            f"Test {_names(ctx, statics)} before {_names(ctx, tensors)}: where the Python test is {which} while tracing, "
            "the tensor's truth is never asked (the same truth: no operand has an effect or raises)"
        )
        return Fix(finding, title, Safety.SAFE, (edit,), full=False)


def _names(ctx: FixContext, values: list[ast.expr]) -> str:
    return ", ".join(f"`{ctx.excerpt(value, 30)}`" for value in values)
