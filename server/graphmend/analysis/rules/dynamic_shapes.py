"""GM4xx: operators whose output *shape* depends on tensor data.

Dynamo's graphs have shapes known from the inputs. `nonzero`, boolean-mask indexing, `unique`,
`bincount`, `masked_select` and `repeat_interleave` with tensor repeats produce as many elements as
the data says, so dynamo ends the graph there (unless
`torch._dynamo.config.capture_dynamic_output_shape_ops = True`, which traces them with unbacked
symbolic sizes). Masked *assignment* (`x[mask] = 0`) keeps the shape and does not break.
"""

from __future__ import annotations

import ast

from ..kinds import BOOL_KINDS, TENSOR_KINDS, Kind, is_tensor
from ..symbols import SHAPE_FLAG
from .base import Rule, RuleContext, TensorOpRule


class ShapeOpRule(TensorOpRule):
    """A tensor op whose output shape depends on the data (`capture_dynamic_output_shape_ops` traces it)."""

    removed_by_flag = SHAPE_FLAG


class NonZero(ShapeOpRule):
    code = "GM401"
    # NumPy's forms too: compiled code runs them as tensor ops (torch._numpy) on any array or list,
    # and they break as `torch.nonzero` does (measured on torch 2.13; recbole's `np.where(node ==
    # u_input[i])`)
    qualnames = frozenset({
        "torch.nonzero", "torch.argwhere", "torch.where",
        "numpy.nonzero", "numpy.argwhere", "numpy.flatnonzero", "numpy.where",
    })
    methods = frozenset({"nonzero", "argwhere"})
    one_argument_forms = frozenset({"torch.where", "numpy.where"})

    def applies(self, node: ast.Call, rest: list[ast.expr], ctx: RuleContext, function_form: bool) -> bool:
        if function_form and ctx.qualname(node.func) in self.one_argument_forms:
            return len(node.args) == 1 and not node.keywords  # where(cond) == nonzero(as_tuple=True)
        return True


class BooleanMaskIndex(Rule):
    code = "GM402"
    node_types = (ast.Subscript,)
    removed_by_flag = SHAPE_FLAG

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Subscript)
        indexed = ctx.kind(node.value)
        # A value of unknown kind indexed by a bool tensor (`self.distance_metric(a, b)[labels
        # == 0]`, sentence-transformers) or by a mask known by its name (`pred_kpts[masks]`,
        # ultralytics): only a tensor (or an array dynamo traces as one) takes a tensor index.
        if indexed not in TENSOR_KINDS and indexed is not Kind.UNKNOWN:
            return
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            inner = part.operand if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Invert) else part
            if indexed in TENSOR_KINDS and ctx.kind(part) is Kind.BOOL_SCALAR:
                return  # a 0-d mask is a data-dependent bool, not a selection: GM205, which no flag removes
            if indexed in TENSOR_KINDS:
                selects = ctx.kind(part) in BOOL_KINDS or ctx.named_mask(inner)  # `x[~mask]` selects as `x[mask]` does
                selects = selects or _compares_unknown_values(part, ctx)
            else:  # asked last: any subscript of a value of unknown kind gets here
                selects = ctx.kind(part) in BOOL_KINDS or ctx.named_mask(inner) or _compares_itself(node, part, ctx)
                selects = selects and not _own_getitem(ctx)
            if selects:
                ctx.report(self, node, mask=ctx.snippet(part))
                return


def _compares_unknown_values(part: ast.expr, ctx: RuleContext) -> bool:
    """An index of a tensor built of comparisons of values of unknown kind (`labels == 0`, a
    parameter of a forward): of tensors or NumPy arrays it is a boolean mask (both break: measured
    on torch 2.13); of Python values a bool, and `t[True]` only adds a dimension, which no code
    indexes a tensor with a comparison to do."""
    return ctx.kind(part) is Kind.UNKNOWN and ctx.compared_names(part) is not None


def _compares_itself(node: ast.Subscript, part: ast.expr, ctx: RuleContext) -> bool:
    """A value of unknown kind indexed by a comparison of that very value (`numerator[valid]` with
    `valid = (numerator != 0) & (denominator != 0)`, torchmetrics): a number cannot be indexed and
    a list compares to a plain bool, so the value is a tensor or an array and the index its mask."""
    compared = ctx.compared_names(part) if ctx.kind(part) is Kind.UNKNOWN else None
    return compared is not None and isinstance(node.value, ast.Name) and node.value.id in compared


def _own_getitem(ctx: RuleContext) -> bool:
    """A class of the file defines `__getitem__`: a value of unknown kind may be one of its
    instances, whose indexing dynamo inlines as the class says (no selection, no break)."""
    return any("__getitem__" in info.methods for info in ctx.index.classes.values())


class OneHotWithoutClassCount(TensorOpRule):
    """`F.one_hot(t)` sizes its output by `t.max() + 1`. Dynamo refuses it outright (GB0246), so
    `capture_dynamic_output_shape_ops` does not help: only a `num_classes` other than -1 does."""

    code = "GM408"
    qualnames = frozenset({"torch.nn.functional.one_hot"})
    methods = frozenset()

    def applies(self, node: ast.Call, rest: list[ast.expr], ctx: RuleContext, function_form: bool) -> bool:
        given = rest[:1] + [k.value for k in node.keywords if k.arg == "num_classes"]
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            return False  # `**kwargs` / `*args` may pass it
        return not given or _is_minus_one(given[0])


def _is_none(node: ast.expr, ctx: RuleContext) -> bool:
    """`None`, or a name the walk knows holds None (a parameter its caller left at a `None` default)."""
    return (isinstance(node, ast.Constant) and node.value is None) or ctx.kind(node) is Kind.NONE


def _is_minus_one(node: ast.expr) -> bool:
    """The literal `-1` (one_hot's default, "infer from the data")."""
    operand = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else None
    return isinstance(operand, ast.Constant) and type(operand.value) is int and operand.value == 1


class RepeatInterleaveByTensor(ShapeOpRule):
    code = "GM406"
    qualnames = frozenset({"torch.repeat_interleave"})
    methods = frozenset({"repeat_interleave"})

    def applies(self, node: ast.Call, rest: list[ast.expr], ctx: RuleContext, function_form: bool) -> bool:
        if any(k.arg == "output_size" and not _is_none(k.value, ctx) for k in node.keywords):
            return False  # `output_size=None` (PyG's `ptr2index(ptr)` passes its default on) is no size
        if function_form and len(node.args) == 1 and not node.keywords:
            return is_tensor(ctx.kind(node.args[0]))  # torch.repeat_interleave(repeats)
        repeats = [a for a in rest[:1]] + [k.value for k in node.keywords if k.arg == "repeats"]
        return any(is_tensor(ctx.kind(r)) for r in repeats)


class CtcLoss(Rule):
    """`F.ctc_loss`, `torch.ctc_loss` and `nn.CTCLoss` modules: `aten._ctc_loss` sizes its
    alignment table from the lengths' values and has no meta kernel for that, so dynamo breaks
    there whether the lengths are tensors or lists, and even with
    `capture_dynamic_output_shape_ops` (GB0036, then GB0037; measured on torch 2.13)."""

    code = "GM409"
    qualnames = frozenset({"torch.nn.functional.ctc_loss", "torch.ctc_loss"})
    callee_kinds = frozenset({Kind.MODULE})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if ctx.qualname(node.func) in self.qualnames or ctx.torch_module_class(node.func) == "CTCLoss":
            ctx.report(self, node)
