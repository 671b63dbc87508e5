"""GM402: a reduction over boolean-mask-selected elements -> a fixed-shape `torch.where` reduction.

`y[m].sum()` has a data-dependent shape in the middle; `torch.where(m, y, 0).sum()` does not, and
gives the same value because the masked-out elements contribute the identity of the reduction
(taxonomy P24a) - up to floating-point rounding: a vectorised sum over the longer tensor adds the
selected values in another order (on 1,000 random floats, 163 of 200 sums differed in the last
bits), so the title says so; integer and boolean sums are exact. Preconditions: a full reduction (no dim) of `sum`, `prod` or `mean`, and a mask
with the same shape as the tensor (a mask over leading dimensions selects rows, which `where`
would align with the trailing dimensions instead). `mean` becomes sum / count, which is NaN for
an empty selection exactly like the original. `max`/`min` are declined: on an empty selection
the original raises, and a `-inf` identity would return a value instead.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import BOOL_KINDS
from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..signatures import Signatures, floating_names

_IDENTITY = {"sum": "0", "nansum": "0", "prod": "1"}


class MaskedReductionFixer:
    codes = frozenset({"GM402"})
    safety = Safety.SAFE
    title = "Reduce with torch.where instead of selecting with a boolean mask (floating sums add in another order: equal up to rounding)"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        subscript = ctx.node_for(finding, (ast.Subscript,))
        if not isinstance(subscript, ast.Subscript):
            raise DeclineError("no-node", "could not find the masked selection in the source")
        function = ctx.function_of(subscript)
        if function is None:
            raise DeclineError("not-in-function", "the selection is not inside a function")
        call, reduction = self._reduction(ctx, subscript)
        mask, tensor = subscript.slice, subscript.value
        if ctx.kind(mask) not in BOOL_KINDS:
            raise DeclineError("not-a-mask", "the index is not a boolean mask")
        check_pure(ctx, mask, "the mask (now evaluated as a where condition)")
        signatures = Signatures(ctx, floating_names(ctx, function, ctx.statement_of(subscript)), at=ctx.statement_of(subscript))
        if not signatures.equal_shapes(signatures.of(mask), signatures.of(tensor)):
            raise DeclineError(
                "mask-shape",
                f"cannot prove the mask `{ctx.code(mask)[:30]}` has the shape of `{ctx.code(tensor)[:30]}` "
                "(a mask over leading dimensions selects rows)",
            )
        torch = ctx.torch_name()
        selected = f"{torch}.where({ctx.code(mask)}, {ctx.code(tensor)}, {{identity}})"
        if reduction == "mean":
            replacement = f"({selected.format(identity='0')}.sum() / {ctx.atom(mask)}.sum())"
        else:
            replacement = f"{selected.format(identity=_IDENTITY[reduction])}.{reduction}()"
        target = ctx.cst_node(function, call, cst.Call)
        edits = [ctx.rewrite(function, {target: cst.parse_expression(replacement)})]
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, self.title, Safety.SAFE, tuple(edits))

    def _reduction(self, ctx: FixContext, subscript: ast.Subscript) -> tuple[ast.Call, str]:
        parent = ctx.parent(subscript)
        if (
            isinstance(parent, ast.Attribute)
            and parent.value is subscript
            and isinstance(ctx.parent(parent), ast.Call)
            and ctx.parent(parent).func is parent  # type: ignore[union-attr]
        ):
            call = ctx.parent(parent)
            assert isinstance(call, ast.Call)
            method = parent.attr
            if method in ("max", "min", "amax", "amin"):
                raise DeclineError("empty-selection", f"`.{method}()` of an empty selection raises; a where-based form would not")
            if method not in (*_IDENTITY, "mean") or call.args or call.keywords:
                raise DeclineError("not-a-reduction", "the selection is not fully reduced by sum, prod or mean")
            return call, method
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is subscript and len(parent.args) == 1 and not parent.keywords:
            name = ctx.qualname(parent.func)
            if name in ("torch.sum", "torch.prod", "torch.mean", "torch.nansum"):
                return parent, name.split(".")[1]
        raise DeclineError("not-a-reduction", "the selected elements are used as a tensor, not only reduced")
