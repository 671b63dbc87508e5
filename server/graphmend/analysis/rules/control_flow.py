"""GM1xx: Python control flow that depends on the *value* of a tensor.

Dynamo traces one path through the code. When Python asks a tensor for its truth value (`if`,
`while`, `a if c else b`, `and`/`or`/`not`, a comprehension filter, `any()`/`all()`), the answer
is data that only exists at run time, so dynamo ends the graph, runs the test eagerly and resumes
in a new graph. Conditions on shapes, dtypes, `is None` and `isinstance` are known at trace time
and never break; neither does a data-dependent `assert` (dynamo turns it into a runtime check).
"""

from __future__ import annotations

import ast

from ..kinds import Kind, is_tensor
from .base import Effect, Rule, RuleContext, compiled, example


class TensorTruthRule(Rule):
    """Shared behaviour: report the tested expression when it is a tensor."""

    def check_truth(self, node: ast.expr, kind: Kind, construct: str, ctx: RuleContext) -> None:
        if is_tensor(kind):
            ctx.report(self, node)


class TensorIf(TensorTruthRule):
    code = "GM101"
    truth_constructs = frozenset({"if"})
    breaks = (
        compiled(
            """
            y = x * 2
            if y.sum() > 0:  # expect: GM101
                y = y + 1
            else:
                y = y - 1
            return y * 3
            """
        ),
        compiled(
            """
            if x.max() > 5:  # expect: GM101
                return x * 2
            elif x.any():  # expect: GM101
                return x + 1
            return x
            """,
            params="x: torch.Tensor",
            note="each test of an elif chain is its own break",
        ),
        example(
            """
            import torch

            @torch.compile
            def f(x, mask=None):
                y = x + 1
                if mask is not None and not torch.all(mask == 1):  # expect: GM101
                    y = y * mask
                return y

            def sample():
                return f, (torch.randn(4), torch.tensor([1.0, 0.0, 1.0, 1.0])), {}
            """,
            note="the transformers attention-mask check",
        ),
    )
    ok = (
        compiled(
            """
            if x.shape[0] > 2 and x.dtype == torch.float32 and mask is None:
                x = x + 1
            if isinstance(x, torch.Tensor) and x.numel() > 0 and x.dim() == 1:
                x = x * 2
            return x
            """,
            params="x, mask=None",
        ),
        compiled(
            """
            y = x * 2
            if not torch.compiler.is_compiling() and y.sum() > 0:
                print("eager only")
            return y
            """,
            note="dynamo knows is_compiling() is True, so the rest of the condition never runs",
        ),
    )


class TensorTernary(TensorTruthRule):
    code = "GM102"
    truth_constructs = frozenset({"ternary"})
    breaks = (
        compiled(
            """
            y = x * 2
            return y + 1 if y.max() > 0 else y - 1  # expect: GM102
            """
        ),
    )
    ok = (
        compiled(
            """
            scale = 2.0 if x.shape[-1] > 3 else 1.0
            return x * scale
            """
        ),
    )


class TensorWhile(TensorTruthRule):
    code = "GM103"
    truth_constructs = frozenset({"while"})
    breaks = (
        example(
            """
            import torch

            @torch.compile
            def f(x):
                y = x * 2
                while y.abs().max() > 1:  # expect: GM103
                    y = y / 2
                return y + 1

            def sample():
                return f, (torch.randn(4) * 8,), {}
            """
        ),
    )
    ok = (
        compiled(
            """
            n = 0
            while n < x.shape[0]:
                x = x + n
                n += 1
            return x
            """
        ),
    )


class TensorBoolOp(TensorTruthRule):
    code = "GM104"
    truth_constructs = frozenset({"boolop", "not"})

    def check_truth(self, node: ast.expr, kind: Kind, construct: str, ctx: RuleContext) -> None:
        if is_tensor(kind):
            # `not t` outside a condition is an instruction dynamo cannot resume after (measured).
            effect = Effect.FRAME_SKIP if construct == "not" else None
            ctx.report(self, node, effect=effect, construct="not" if construct == "not" else "and/or")

    breaks = (
        compiled(
            """
            y = x * 2
            both = (y.sum() > 0) and (y.mean() > 0)  # expect: GM104
            return x + both
            """
        ),
        compiled(
            """
            y = x * 2
            negative = not (y.sum() > 0)  # expect: GM104
            return x + negative
            """,
            note="`not` in a value position makes dynamo skip the whole function",
        ),
    )
    ok = (
        compiled(
            """
            y = x * 2
            both = (y > 0) & (x > 0)
            use_bias = bias is not None and x.shape[0] > 1
            return y + both + (1 if use_bias else 0)
            """,
            params="x, bias=None",
        ),
    )


class TensorAnyAll(Rule):
    code = "GM105"
    qualnames = frozenset({"builtins.any", "builtins.all"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if node.args and (is_tensor(ctx.kind(node.args[0])) or ctx.kind(node.args[0]) is Kind.TENSORS):
            ctx.report(self, node)

    breaks = (
        compiled(
            """
            positive = x > 0
            return x + any(positive)  # expect: GM105
            """
        ),
    )
    ok = (
        compiled(
            """
            flags = [x.shape[0] > 1, x.dim() == 1]
            return x + (x > 0).any() + all(flags)
            """
        ),
    )


class TensorComprehensionFilter(TensorTruthRule):
    code = "GM106"
    truth_constructs = frozenset({"comprehension"})
    breaks = (
        compiled(
            """
            parts = [x * i for i in range(3) if (x * i).sum() > 0]  # expect: GM106
            return x + len(parts)
            """
        ),
    )
    ok = (
        compiled(
            """
            parts = [x * i for i in range(4) if i % 2 == 0]
            return torch.stack(parts).sum(0)
            """
        ),
    )
