"""GM4xx: operators whose output *shape* depends on tensor data.

Dynamo's graphs have shapes known from the inputs. `nonzero`, boolean-mask indexing, `unique`,
`bincount`, `masked_select` and `repeat_interleave` with tensor repeats produce as many elements as
the data says, so dynamo ends the graph there (unless
`torch._dynamo.config.capture_dynamic_output_shape_ops = True`, which traces them with unbacked
symbolic sizes). Masked *assignment* (`x[mask] = 0`) keeps the shape and does not break.
"""

from __future__ import annotations

import ast

from ..kinds import BOOL_KINDS, TENSOR_KINDS, is_tensor
from ..symbols import SHAPE_FLAG
from .base import Rule, RuleContext, TensorOpRule, compiled, example


class ShapeOpRule(TensorOpRule):
    """A tensor op whose output shape depends on the data (`capture_dynamic_output_shape_ops` traces it)."""

    removed_by_flag = SHAPE_FLAG


class NonZero(ShapeOpRule):
    code = "GM401"
    qualnames = frozenset({"torch.nonzero", "torch.argwhere", "torch.where"})
    methods = frozenset({"nonzero", "argwhere"})

    def applies(self, node: ast.Call, rest: list[ast.expr], ctx: RuleContext, function_form: bool) -> bool:
        if function_form and ctx.qualname(node.func) == "torch.where":
            return len(node.args) == 1 and not node.keywords  # torch.where(cond) == nonzero(as_tuple=True)
        return True

    breaks = (
        compiled(
            """
            y = x * 2
            idx = torch.nonzero(y > 0)  # expect: GM401
            return idx.float().sum() + y.sum()
            """
        ),
        compiled(
            """
            routing = torch.stack([x > 0, x < 0])
            hit = torch.greater(routing.sum(dim=-1), 0).nonzero()  # expect: GM401
            rows, cols = torch.where(routing)  # expect: GM401
            return x.sum() + hit.sum() + rows.sum()
            """,
            note="the MoE expert-dispatch idiom",
        ),
    )
    ok = (
        compiled(
            """
            count = (x > 0).sum()
            return torch.where(x > 0, x, -x) + count
            """
        ),
    )


class BooleanMaskIndex(Rule):
    code = "GM402"
    node_types = (ast.Subscript,)
    removed_by_flag = SHAPE_FLAG

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Subscript)
        if ctx.kind(node.value) not in TENSOR_KINDS:
            return
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if ctx.kind(part) in BOOL_KINDS or ctx.named_mask(part):
                ctx.report(self, node, mask=ctx.snippet(part))
                return

    breaks = (
        compiled(
            """
            y = x * 2
            return y[y > 0].sum() + 1  # expect: GM402
            """
        ),
        example(
            """
            import torch

            @torch.compile
            def f(x: torch.Tensor, mask: torch.BoolTensor):
                picked = x[:, mask]  # expect: GM402
                x[mask[None, :].expand_as(x)] += 1  # expect: GM402
                return picked.sum() + x

            def sample():
                return f, (torch.randn(3, 4), torch.tensor([True, False, True, True])), {}
            """,
            note="a mask in a tuple index, and an augmented assignment, which reads before it writes",
        ),
        example(
            """
            import torch

            @torch.compile
            def f(x, h, padding_mask):
                out = x.clone()
                out[padding_mask] = h[padding_mask]  # expect: GM402
                return out

            def sample():
                return f, (torch.randn(4), torch.randn(4), torch.tensor([True, False, True, False])), {}
            """,
            note="a parameter named as a mask (`mask`, `*_mask`) with no annotation is taken at its word",
        ),
        example(
            """
            import torch

            @torch.compile
            def f(pred, target, mask):
                valid = mask & (target > 0)
                return pred[valid].abs().sum()  # expect: GM402

            def sample():
                return f, (torch.randn(4), torch.randn(4), torch.tensor([True, False, True, True])), {}
            """,
            note="a mask parameter combined with a comparison by `&` is a boolean mask too",
        ),
    )
    ok = (
        example(
            """
            import torch

            @torch.compile
            def f(pred, target, flags):
                picked = flags & (target > 0)
                return pred[picked].abs().sum()

            def sample():
                return f, (torch.randn(4), torch.randn(4), torch.tensor([1, 0, 3, 1])), {}
            """,
            note="`flags` is not named as a mask: with an integer tensor `&` gives integer indices, a gather",
        ),
        compiled(
            """
            y = x.clone()
            y[y > 0] = 0
            idx = torch.argsort(x)
            return y + x[idx] + torch.where(x > 0, x, 0).sum()
            """,
            note="masked assignment keeps the shape; integer-tensor indexing is fine",
        ),
    )


class MaskedSelect(ShapeOpRule):
    code = "GM403"
    qualnames = frozenset({"torch.masked_select"})
    methods = frozenset({"masked_select"})
    breaks = (
        compiled(
            """
            return torch.masked_select(x, x > 0).sum() + x  # expect: GM403
            """
        ),
    )
    ok = (
        compiled(
            """
            return torch.where(x > 0, x, 0).sum() + x.masked_fill(x < 0, 0)
            """,
            note="the fixed-shape forms",
        ),
    )

class Unique(ShapeOpRule):
    code = "GM404"
    qualnames = frozenset({"torch.unique", "torch.unique_consecutive"})
    methods = frozenset({"unique", "unique_consecutive"})
    breaks = (
        compiled(
            """
            y = (x * 2).round()
            return torch.unique(y).sum() + y.unique_consecutive().sum()  # expect: GM404
            """
        ),
    )
    ok = (
        compiled(
            """
            sorted_x, order = torch.sort(x)
            return sorted_x + order
            """
        ),
    )

class BinCount(ShapeOpRule):
    code = "GM405"
    qualnames = frozenset({"torch.bincount"})
    methods = frozenset({"bincount"})
    breaks = (
        compiled(
            """
            buckets = (x.abs() * 3).long()
            return torch.bincount(buckets).sum() + x  # expect: GM405
            """
        ),
    )
    ok = (
        example(
            """
            import torch
            import torch.nn.functional as F

            @torch.compile
            def f(x):
                buckets = (x.abs() * 3).long().clamp(max=3)
                return F.one_hot(buckets, 4).sum(0) + x.sum()
            """,
            note="a fixed number of bins",
        ),
    )

class RepeatInterleaveByTensor(ShapeOpRule):
    code = "GM406"
    qualnames = frozenset({"torch.repeat_interleave"})
    methods = frozenset({"repeat_interleave"})

    def applies(self, node: ast.Call, rest: list[ast.expr], ctx: RuleContext, function_form: bool) -> bool:
        if any(k.arg == "output_size" for k in node.keywords):
            return False
        if function_form and len(node.args) == 1 and not node.keywords:
            return is_tensor(ctx.kind(node.args[0]))  # torch.repeat_interleave(repeats)
        repeats = [a for a in rest[:1]] + [k.value for k in node.keywords if k.arg == "repeats"]
        return any(is_tensor(ctx.kind(r)) for r in repeats)

    breaks = (
        compiled(
            """
            counts = (x.abs() * 3).long()
            return torch.repeat_interleave(x, counts).sum() + x  # expect: GM406
            """
        ),
    )
    ok = (
        compiled(
            """
            return torch.repeat_interleave(x, 2).sum() + x.repeat_interleave(3).sum()
            """
        ),
    )
