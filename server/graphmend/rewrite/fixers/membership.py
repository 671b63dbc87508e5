"""GM209: a membership test on tensor values in an `if` -> the tensor test it computes, when the
`if` can then be rewritten too.

`x in t` runs `Tensor.__contains__`, which is `(t == x).any().item()` for a number or a tensor `x`;
`t in (a, b)` with a tensor `t` and numbers `a`, `b` asks for the truth of `t == a`, then of
`t == b`. Written as those tensor expressions (`(t == x).any()`, `(t == a) | (t == b)`, negated
with `~` for `not in`) the test has the same truth, and the same error where `t` holds several
values (the `if` asks for the truth of a tensor of several elements either way), but it is a
tensor condition: the `if` on it is a branch on a tensor, which the Where or ordered-op fixer then
rewrites. The membership rewrite alone would only move the break, so it is applied only where the
look-ahead (lookahead.py) finds that follow-up fix.

Preconditions: the test is part of an `if`'s condition; `x in t` with `x` a number or a tensor
(`__contains__` raises for anything else), or of unknown type and a plain name or attribute (a
config's `pad_token_id`): then `_graphmend_compares_in_tensor(x)`, settled while tracing, keeps
the original test for any other type, which raises as before; `t in (a, b)` with a list or tuple display of number
literals and `t` a plain name or attribute (it is read once per element); everything pure.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import TENSOR_KINDS, Kind
from ...findings import Finding
from ..compile_checks import COMPARES_IN_TENSOR, call_text, checked_or_original, helper_edits
from ..context import FixContext
from ..lookahead import require_branches_fixed_after
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..selections import number_literal, reference_root

TITLE = "Test membership with tensor comparisons (`(t == x).any()`, `(t == a) | (t == b)`), so the `if` can keep the graph"


class MembershipFixer:
    codes = frozenset({"GM209"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        compare = ctx.node_for(finding, (ast.Compare,))
        if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.ops[0], (ast.In, ast.NotIn))):
            raise DeclineError("not-a-membership", "only a single `in` or `not in` test is rewritten")
        statement = ctx.statement_of(compare)
        function = ctx.function_of(compare)
        if not isinstance(statement, ast.If) or function is None or not ctx.contains(statement.test, compare):
            raise DeclineError("membership-not-tested", "the membership test is not part of an `if` condition")
        left, right = compare.left, compare.comparators[0]
        check_pure(ctx, compare, "the membership test")
        text, checked = _tensor_test(ctx, left, right)
        if isinstance(compare.ops[0], ast.NotIn):
            text = f"~{text}"
        if checked:
            text = checked_or_original(text, call_text(COMPARES_IN_TENSOR, ctx.code(left)), ctx.code(compare))
        target = ctx.cst_node(function, compare, cst.Comparison)
        edits = [ctx.rewrite(function, {target: cst.parse_expression(text)})]
        if checked:
            edits += helper_edits(ctx, COMPARES_IN_TENSOR)
        why = "the membership test is read by an `if`, which would then branch on a tensor"
        require_branches_fixed_after(ctx, edits, function, finding.function, [statement], Safety.SAFE, why)
        return Fix(finding, TITLE, Safety.SAFE, tuple(edits))


def _tensor_test(ctx: FixContext, left: ast.expr, right: ast.expr) -> tuple[str, bool]:
    """The tensor expression whose truth is that of `left in right`, and whether it holds only
    where `left` is a tensor or a number (checked while tracing: a value of unknown type, such
    as a config's `pad_token_id`)."""
    if ctx.kind(right) in TENSOR_KINDS:
        test = f"({ctx.atom(right)} == {ctx.atom(left)}).any()"
        if number_literal(left) or ctx.kind(left) in TENSOR_KINDS:
            return test, False
        if ctx.kind(left) is not Kind.UNKNOWN or reference_root(left) is None:
            raise DeclineError(
                "membership-operand",
                f"`{ctx.excerpt(left, 30)}` is not known to be a number or a tensor (`in` on a tensor raises for anything else), "
                "and it is not a plain name or attribute to check while tracing",
            )
        return test, True
    if not isinstance(right, (ast.List, ast.Tuple)) or not right.elts:
        raise DeclineError("membership-operand", "the values are not a list or tuple written out in the test")
    if not all(number_literal(e) for e in right.elts):
        raise DeclineError("membership-operand", "the values are not all number literals")
    if reference_root(left) is None:
        raise DeclineError("membership-operand", f"`{ctx.excerpt(left, 30)}` is not a plain name, to compare with each value")
    return "(" + " | ".join(f"({ctx.atom(left)} == {ctx.code(e)})" for e in right.elts) + ")", False
