"""GM402: `out[m] = src[m]` (and `out[m] += src[m]`, `-=`) -> a fixed-shape `torch.where` copy.

Reading `src[m]` gathers a data-dependent number of elements, so dynamo breaks on it. Written back
through the same mask, the gather is not needed: every position where `m` holds takes `src`'s value,
every other keeps `out`'s, which is what `torch.where(m, src, out)` computes with no data-dependent
shape. Copied into `out` in place (`out.copy_(...)`), the tensor the caller or a view may hold
changes exactly as before:

    if _graphmend_mask_selects_alike(m, out, src):
        out.copy_(torch.where(m, src, out))
    else:
        out[m] = src[m]

Exact only when the mask is boolean with the shape and device of both tensors (a mask over leading
dimensions selects rows, a uint8 mask indexes differently) and the tensors share a dtype (the
assignment casts to `out`'s dtype, `where` would promote). Dynamo knows all of that while tracing,
so the predicate (added once per module) costs no break and the original statement runs wherever it
does not hold. `+=`/`-=` become `torch.where(m, out + src, out)`: the sum is computed everywhere but
kept only where the mask holds, and its gradient is 1 on both sides, so gradients are unchanged too
(a product's would multiply a zero by a possibly infinite factor, so `*=` and `/=` are left alone).
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from ...findings import Finding
from ..compile_checks import MASK_SELECTS_ALIKE, call_text, helper_edits
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure

TITLE = "Copy with torch.where instead of assigning through a boolean mask"
_OPERATORS = {ast.Add: "+", ast.Sub: "-"}


def _decline(key: str, reason: str) -> DeclineError:
    return DeclineError(key, reason)


class MaskedAssignFixer:
    codes = frozenset({"GM402"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        subscript = ctx.node_for(finding, (ast.Subscript,))
        if not isinstance(subscript, ast.Subscript):
            raise _decline("no-node", "could not find the masked selection in the source")
        statement = ctx.statement_of(subscript)
        function = ctx.function_of(subscript)
        if function is None or not isinstance(statement, (ast.Assign, ast.AugAssign)):
            raise _decline("not-a-statement", "the selection is not part of an assignment through the mask")
        return ctx.remember(("masked-assign", id(statement)), lambda: self._plan(finding, ctx, statement, function))

    def _plan(self, finding: Finding, ctx: FixContext, statement: ast.Assign | ast.AugAssign, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Fix:
        target, value = _target_and_value(statement)
        if not (isinstance(target, ast.Subscript) and isinstance(value, ast.Subscript)):
            raise _decline("not-a-statement", "only `out[mask] = src[mask]` is rewritten")
        mask = target.slice
        if ctx.code(value.slice) != ctx.code(mask):
            raise _decline("different-masks", f"`{ctx.code(target)[:30]}` and `{ctx.code(value)[:30]}` use different indices")
        operator = ""
        if isinstance(statement, ast.AugAssign):
            operator = _OPERATORS.get(type(statement.op), "")
            if not operator:
                raise _decline("augmented-product", "only `+=` and `-=` through a mask keep their gradients as a where")
        for role, node in (("the mask", mask), ("the assigned tensor", target.value), ("the copied tensor", value.value)):
            check_pure(ctx, node, f"{role} (now evaluated twice)")
        out, src, mask_text = ctx.atom(target.value), ctx.atom(value.value), ctx.code(mask)
        selected = f"{out} {operator} {src}" if operator else src
        torch = ctx.torch_name()
        check = call_text(MASK_SELECTS_ALIKE, mask_text, ctx.code(target.value), ctx.code(value.value))
        if _shares_a_line(ctx, statement):
            raise _decline("several-statements", "the line holds more than one statement")
        line = ctx.cst_node(function, statement, cst.SimpleStatementLine)
        assert isinstance(line, cst.SimpleStatementLine)
        original = ctx.render(function, line.with_changes(leading_lines=[]))
        code = f"if {check}:\n    {out}.copy_({torch}.where({mask_text}, {selected}, {out}))\nelse:\n" + textwrap.indent(original, "    ")
        try:
            new_statements = list(cst.parse_module(code).body)
        except cst.ParserSyntaxError as exc:  # a bug in this fixer: never write code that does not parse
            raise _decline("generated-code", f"the generated code does not parse ({exc.message})") from exc
        new_statements[0] = new_statements[0].with_changes(leading_lines=line.leading_lines)
        helpers = helper_edits(ctx, MASK_SELECTS_ALIKE)  # with `import torch` first where the module lacks it
        import_edit = None if helpers else ctx.import_edit()
        edits = [ctx.rewrite(function, {line: cst.FlattenSentinel(new_statements)}), *helpers]
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, TITLE, Safety.SAFE, tuple(edits))


def _target_and_value(statement: ast.Assign | ast.AugAssign) -> tuple[ast.expr | None, ast.expr]:
    if isinstance(statement, ast.AugAssign):
        return statement.target, statement.value
    return (statement.targets[0] if len(statement.targets) == 1 else None), statement.value


def _shares_a_line(ctx: FixContext, statement: ast.stmt) -> bool:
    """Another statement on the statement's lines (`a = b; out[m] = src[m]`)."""
    parent = ctx.parent(statement)
    siblings = [n for n in ast.iter_child_nodes(parent) if isinstance(n, ast.stmt)] if parent is not None else []
    end = statement.end_lineno or statement.lineno
    return any(s is not statement and s.lineno <= end and (s.end_lineno or s.lineno) >= statement.lineno for s in siblings)
