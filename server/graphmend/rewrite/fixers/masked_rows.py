"""GM402: a classification loss over rows selected by a boolean mask -> the loss over every row,
with the unselected rows left out through `ignore_index`.

`F.cross_entropy(logits[m], labels[m])` keeps the rows `m` selects, a number that depends on the
data: dynamo breaks at the selection. cross_entropy and nll_loss already know how to leave rows
out: a target equal to `ignore_index` adds nothing to a sum and is not counted by a mean, weighted
or not, with or without label smoothing. So

    F.cross_entropy(torch.where(m[:, None], logits, 0), torch.where(m, labels, -100))

is the same loss on fixed shapes (transformers' token-classification heads moved to this form by
hand). Each kept row's loss is computed as before; an empty selection gives NaN for a mean and 0
for a sum, as before; a kept row whose label is out of range raises as before; only the sum's
order of additions changes, which the title says. The unselected rows' scores are zeroed, so a NaN
or inf there (often why they are masked out) reaches neither the loss nor, as `0 * nan`, the
gradient. Measured against the original on 300 random cases x 6 keyword sets (mean and sum, label
smoothing, class weights, a given ignore_index; NaN rows, empty selections): equal values (rtol
1e-6) and gradients.

Preconditions (each with a fixture in tests/fixtures/declines/): the scores and the labels are
selected by the same mask, written the same way, and are the call's two positional arguments; the
keywords are `reduction` ("mean" or "sum": "none" returns one value per kept row), `ignore_index`
(an integer literal), `label_smoothing` and `weight`; the mask, scores, labels and weight are pure
(the mask is evaluated twice). That the mask is 1-d boolean over the rows of 2-d scores and 1-d
integer labels is checked while tracing (`_graphmend_mask_selects_rows`); elsewhere the original
selection runs, and breaks, as before.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...findings import Finding
from ..compile_checks import MASK_SELECTS_ROWS, call_text, checked_or_original, helper_edits
from ..context import FixContext
from ..flow import reaching_definition
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..selections import rereadable

_LOSSES = frozenset({"torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss"})
_KEYWORDS = frozenset({"reduction", "ignore_index", "label_smoothing", "weight"})
_LOSS_MODULES = frozenset({"CrossEntropyLoss", "NLLLoss"})
_DEFAULT_IGNORE_INDEX = "-100"  # cross_entropy's and nll_loss's


class MaskedRowLossFixer:
    codes = frozenset({"GM402"})
    safety = Safety.SAFE
    narrow = True  # one shape of a masked selection: the general fixer's reason says more
    title = (
        "Compute the loss on every row, the unselected rows' targets set to ignore_index (and their scores to 0), "
        "instead of selecting rows with a boolean mask (the sum adds in another order: equal up to rounding)"
    )

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.Subscript,))
        call = ctx.parent(node) if isinstance(node, ast.Subscript) else None
        if not (isinstance(call, ast.Call) and any(a is node for a in call.args)):
            raise DeclineError("not-a-row-loss", "the selection is not an argument of cross_entropy or nll_loss")
        module, constructor = _loss_module(ctx, call)
        if ctx.qualname(call.func) not in _LOSSES and module is None:
            raise DeclineError("not-a-row-loss", "the selection is not an argument of cross_entropy or nll_loss")
        function = ctx.function_of(call)
        if function is None:
            raise DeclineError("not-in-function", "the loss is not computed inside a function")
        scores, labels, mask = _selections(ctx, call)
        keywords = _keywords(ctx, call) if module is None else _no_keywords(ctx, call)
        for part, role in ((mask, "the mask (evaluated twice)"), (scores, "the scores"), (labels, "the labels")):
            check_pure(ctx, part, role)
        if not rereadable(mask):
            raise DeclineError("mask-not-a-name", f"the mask `{ctx.excerpt(mask, 30)}` is computed, not a name or a comparison of names, to read again")
        torch = ctx.torch_name()
        settings = call if module is None else constructor  # where ignore_index and reduction are written
        if settings is not None:
            if settings is constructor:
                _keywords(ctx, settings)  # a module built here: its keywords are checked as the function's are
            ignore_index = next((ctx.code(k.value) for k in settings.keywords if k.arg == "ignore_index"), _DEFAULT_IGNORE_INDEX)
            module = None  # its settings are known: nothing to read off it while tracing
        else:  # `self.criterion`: the module's own settings, read while tracing
            assert module is not None
            ignore_index = f"{ctx.atom(module)}.ignore_index"
        rest = "".join(f", {k.arg}={ctx.code(k.value)}" for k in keywords)
        m, x, y = ctx.code(mask), ctx.code(scores), ctx.code(labels)
        fixed = f"{ctx.code(call.func)}({torch}.where({ctx.atom(mask)}[:, None], {x}, 0), {torch}.where({m}, {y}, {ignore_index}){rest})"
        check = call_text(MASK_SELECTS_ROWS, m, x, y, *([ctx.code(module)] if module is not None else []))
        replacement = checked_or_original(fixed, check, ctx.code(call))
        target = ctx.cst_node(function, call, cst.Call)
        edits = [ctx.rewrite(function, {target: cst.parse_expression(replacement)}), *helper_edits(ctx, MASK_SELECTS_ROWS)]
        return Fix(finding, self.title, Safety.SAFE, tuple(edits))


def _selections(ctx: FixContext, call: ast.Call) -> tuple[ast.expr, ast.expr, ast.expr]:
    """(scores, labels, mask) of `loss(scores[mask], labels[mask])`."""
    if len(call.args) != 2 or any(isinstance(a, ast.Starred) for a in call.args):
        raise DeclineError("row-loss-arguments", "the loss does not take exactly the scores and the labels as positional arguments")
    first, second = call.args
    if not (isinstance(first, ast.Subscript) and isinstance(second, ast.Subscript)):
        raise DeclineError("row-loss-arguments", "the scores and the labels are not both selected with a mask")
    if ctx.code(first.slice) != ctx.code(second.slice):
        raise DeclineError("different-masks", f"the scores and the labels are selected by different masks (`{ctx.excerpt(first.slice, 25)}`, `{ctx.excerpt(second.slice, 25)}`)")
    return first.value, second.value, first.slice


def _keywords(ctx: FixContext, call: ast.Call) -> list[ast.keyword]:
    """The keywords carried over, after checking each: what the rewrite cannot pass on declines."""
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in _KEYWORDS:
            raise DeclineError("row-loss-keyword", f"the loss takes `{ctx.excerpt(keyword, 30)}`, which the rewrite does not carry over")
        value = keyword.value
        if keyword.arg == "reduction" and not (isinstance(value, ast.Constant) and value.value in ("mean", "sum")):
            raise DeclineError("row-loss-reduction", "the reduction is not \"mean\" or \"sum\" (\"none\" gives one value per selected row)")
        if keyword.arg == "ignore_index" and not _int_literal(value):
            raise DeclineError("row-loss-keyword", "ignore_index is not an integer literal")
        if keyword.arg in ("label_smoothing", "weight"):
            check_pure(ctx, value, f"the {keyword.arg}")
    return list(call.keywords)


def _loss_module(ctx: FixContext, call: ast.Call) -> tuple[ast.expr | None, ast.Call | None]:
    """The callee of `criterion(scores[m], labels[m])` when it is an nn.CrossEntropyLoss or
    nn.NLLLoss, and the call that built it when that is in sight: a local name bound to one
    (`loss_fct = CrossEntropyLoss()`, transformers' style: its keywords are read from the source,
    since dynamo cannot read the attributes of a loss module built while it traces), or a module
    attribute set to one in `__init__` (`self.criterion`: its settings are read off it while
    tracing, which dynamo does)."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        function = ctx.function_of(call)
        owner = ctx.index.owner.get(id(function)) if function is not None else None
        layer = ctx.index.attr_torch_class(owner, func.attr) if owner is not None else None
        return (func, None) if layer in _LOSS_MODULES else (None, None)
    if isinstance(func, ast.Name):
        statement = ctx.statement_of(call)
        value = reaching_definition(ctx, statement, func.id) if statement is not None else None
        name = ctx.qualname(value.func) if isinstance(value, ast.Call) else None
        if isinstance(value, ast.Call) and name is not None and name.startswith("torch.nn.") and name.rsplit(".", 1)[-1] in _LOSS_MODULES:
            if value.args:
                raise DeclineError("row-loss-keyword", f"`{ctx.excerpt(value, 40)}` passes its settings by position")
            return func, value
    return None, None


def _no_keywords(ctx: FixContext, call: ast.Call) -> list[ast.keyword]:
    if call.keywords:
        raise DeclineError("row-loss-keyword", f"the loss module is called with `{ctx.excerpt(call.keywords[0], 30)}`, which the rewrite does not carry over")
    return []


def _int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int
