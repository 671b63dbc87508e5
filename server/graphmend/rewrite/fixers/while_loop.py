"""GM103: `while <tensor test>:` -> `torch.while_loop`, when that provably keeps the meaning.

A data-dependent `while` breaks the graph once per iteration (taxonomy P07). `torch.while_loop`
traces the loop once as a higher-order op; eagerly it runs the same Python loop. Preconditions:
- the body only assigns names (no break/continue/return, no other statements, no `else`), from
  pure expressions (purity.py): the body runs inside a traced function;
- every name the body assigns (the loop-carried values) is defined before the loop and is a
  tensor whose dtype and shape the body keeps (while_loop requires it; signatures.py);
- the test is a single tensor value (0-d), pure.
Names the loop only reads are captured from the enclosing scope, which while_loop supports.

Unsafe, measured on torch 2.13: when the loop runs zero times, `torch.while_loop`'s backward
drops the gradient through the loop's inputs (eagerly and compiled; the forward values are
right). Code that never differentiates through the loop is unaffected; the title says so.
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from ...analysis.kinds import TENSOR_KINDS
from ...findings import Finding
from ...quoting import excerpt
from ..context import FixContext
from ..flow import defined_before
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..signatures import Signatures, floating_names
from .conditions import check_condition_pure, condition_text
from .generated import flush_blank_lines, fresh_name


class WhileLoopFixer:
    codes = frozenset({"GM103"})
    safety = Safety.UNSAFE
    title = (
        "Loop with torch.while_loop instead of a Python while on a tensor "
        "(torch 2.13 loses input gradients when the loop runs zero times)"
    )

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.expr,))
        loop = next((a for a in ctx.ancestors(node) if isinstance(a, ast.While)), None) if node is not None else None
        if loop is None or not ctx.contains(loop.test, node):
            raise DeclineError("not-a-while", "the tensor condition is not the test of a `while` loop")
        function = ctx.function_of(loop)
        assert function is not None
        if loop.orelse:
            raise DeclineError("loop-else", "the loop has an `else` block")
        carried: list[str] = []
        for stmt in loop.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                raise DeclineError("loop-statement", f"the loop body does more than assign names (`{excerpt(ctx.code(stmt).splitlines()[0], 40)}`)")
            check_pure(ctx, stmt.value, f"the loop body (`{stmt.targets[0].id} = ...`)")
            if ctx.kind(stmt.value) not in TENSOR_KINDS:
                raise DeclineError("not-tensor", f"the loop-carried `{stmt.targets[0].id}` is not known to be a tensor")
            if stmt.targets[0].id not in carried:
                carried.append(stmt.targets[0].id)
        for name in carried:
            if not defined_before(ctx, loop, name):
                raise DeclineError("undefined-on-a-path", f"the loop-carried `{name}` is not defined before the loop")
        torch = ctx.torch_name()
        condition = condition_text(ctx, loop.test, torch)
        check_condition_pure(ctx, loop.test, "the loop condition")
        self._check_types_kept(ctx, function, loop, carried)
        cond_name = fresh_name(function, "loop_cond")
        body_name = fresh_name(function, "loop_body")
        parameters = ", ".join(carried)
        body_text = textwrap.dedent("\n".join(ctx.code(stmt) for stmt in loop.body))
        returned = f"{parameters}," if len(carried) == 1 else parameters
        targets = f"({parameters},)" if len(carried) == 1 else parameters
        code = (
            f"def {cond_name}({parameters}):\n"
            f"    return {condition}\n\n"
            f"def {body_name}({parameters}):\n"
            + textwrap.indent(body_text, "    ")
            + f"\n    return {returned}\n\n"
            f"{targets} = {torch}.while_loop({cond_name}, {body_name}, ({returned}))\n"
        )
        statements = [flush_blank_lines(stmt) for stmt in cst.parse_module(code).body]
        target = ctx.cst_node(function, loop, cst.While)
        statements[0] = statements[0].with_changes(leading_lines=target.leading_lines)
        edits = [ctx.rewrite(function, {target: cst.FlattenSentinel(statements)})]
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, self.title, Safety.UNSAFE, tuple(edits))

    def _check_types_kept(self, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.While, carried: list[str]) -> None:
        """Each iteration must hand the next one tensors of the same dtype and shape."""
        before = Signatures(ctx, floating_names(ctx, function, loop), at=loop)
        floating = set(floating_names(ctx, function, loop))
        floating |= {n for n in carried if before.is_floating(before._norm(before.of(ast.Name(id=n, ctx=ast.Load())).dtype))}
        inside = Signatures(ctx, floating, at=loop.body[0])
        for stmt in loop.body:
            name = stmt.targets[0].id  # type: ignore[attr-defined]
            start = inside.of(ast.Name(id=name, ctx=ast.Load()))
            end = inside.of(stmt.value)  # type: ignore[attr-defined]
            if not inside.equal(start, end):
                raise DeclineError(
                    "dtype-shape",
                    f"cannot prove the loop keeps the dtype and shape of `{name}` (`{ctx.excerpt(stmt.value, 30)}`); "  # type: ignore[attr-defined]
                    "torch.while_loop requires it",
                )
