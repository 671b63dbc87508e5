"""GM1xx: Python control flow that depends on the *value* of a tensor.

Dynamo traces one path through the code. When Python asks a tensor for its truth value (`if`,
`while`, `a if c else b`, `and`/`or`/`not`, a comprehension filter, `any()`/`all()`), the answer
is data that only exists at run time, so dynamo ends the graph, runs the test eagerly and resumes
in a new graph. Conditions on shapes, dtypes, `is None` and `isinstance` are known at trace time
and never break; neither does a data-dependent `assert` whose message is absent or one constant
(dynamo turns it into a runtime check). A computed message hides that pattern: GM107 (walker.py).
"""

from __future__ import annotations

import ast

from ..kinds import Kind, is_tensor
from .base import Effect, Rule, RuleContext


class TensorTruthRule(Rule):
    """Shared behaviour: report the tested expression when it is a tensor."""

    def check_truth(self, node: ast.expr, kind: Kind, construct: str, ctx: RuleContext) -> None:
        if is_tensor(kind):
            ctx.report(self, node)


class TensorBoolOp(TensorTruthRule):
    code = "GM104"
    truth_constructs = frozenset({"boolop", "not"})

    def check_truth(self, node: ast.expr, kind: Kind, construct: str, ctx: RuleContext) -> None:
        if is_tensor(kind):
            # `not t` outside a condition is an instruction dynamo cannot resume after (measured).
            effect = Effect.FRAME_SKIP if construct == "not" else None
            ctx.report(self, node, effect=effect, construct="not" if construct == "not" else "and/or")


class TensorAnyAll(Rule):
    code = "GM105"
    qualnames = frozenset({"builtins.any", "builtins.all"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if node.args and (is_tensor(ctx.kind(node.args[0])) or ctx.kind(node.args[0]) is Kind.TENSORS):
            ctx.report(self, node)


