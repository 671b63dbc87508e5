"""Repeat the end of a function inside the `if` before it, so that names bound in the `if` are
read only there.

`if mask is not None: pred = pred[mask]; gt = gt[mask]` followed by the loss over `pred` and `gt`
is how masked losses are usually written: the selections are bound in the branch and read after
it, where they may hold the unselected tensors, so no rewrite of the selections alone is safe.
When the function ends in `return` (or `raise`), appending the statements after the `if` to its
body changes nothing: that path ran them next anyway, and now returns before reaching the
originals, which the other path still runs. In the copy the selections' uses all sit in one
block, where the masked-reduction fixer can rewrite them. The copy is made only for that fix: the
fix is planned on the copied text, and declined with the original reason unless it applies there.

Preconditions: the `if` is a statement of the function's own body (not in a loop, `with` or
`try`), the binding is a statement of the `if`'s body, which does not end in `return`/`raise`
already; the statements after the `if` end in `return` or `raise`, define no function or class
(a copied `def` would be a second function object), declare no `global`/`nonlocal` (the copy
would use the name before the declaration) and hold no other finding (its break would be
reported twice).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from ..astwalk import walk
from ..findings import Finding
from ..textedits import apply_edits
from .context import FixContext
from .model import DeclineError, Fix
from .variant import plan_on_variant

_TERMINAL = (ast.Return, ast.Raise)


def plan_with_tail_copied(
    finding: Finding, ctx: FixContext, binding: ast.stmt, declined: DeclineError, plan: Callable[[Finding, FixContext], Fix]
) -> Fix:
    """`plan` applied to `finding` in the file with the function's tail copied into the `if`
    holding `binding`; its edits are turned into edits of the original text. Raises `declined`
    where the copy does not apply or `plan` declines on it too."""
    function = ctx.function_of(binding)
    branch = ctx.parent(binding)
    if function is None or not isinstance(branch, ast.If) or not any(s is binding for s in branch.body):
        raise declined
    if not any(s is branch for s in function.body) or isinstance(branch.body[-1], _TERMINAL):
        raise declined
    tail = function.body[next(i for i, s in enumerate(function.body) if s is branch) + 1 :]
    if not tail or not isinstance(tail[-1], _TERMINAL):
        raise declined
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal)) for s in tail for n in walk(s)):
        raise declined  # a `global` after the copy's uses of the name would not compile
    first, last = tail[0].lineno, tail[-1].end_lineno or tail[-1].lineno
    if any(first <= f.span.start_line <= last for f in ctx.result.findings):
        raise declined  # a break there would be copied: two findings for one
    old_if = ctx.cst_node(function, branch, cst.If)
    copied = [ctx.cst_node(function, statement, cst.BaseStatement) for statement in tail]  # type: ignore[type-abstract]
    new_if = old_if.with_changes(body=old_if.body.with_changes(body=[*old_if.body.body, *copied]))
    variant_text = apply_edits(ctx.text, [ctx.rewrite(function, {old_if: new_if})])
    # Lines up to the end of the `if`'s own body did not move: the finding is where it was.
    why = f"the code after `if {ctx.excerpt(branch.test, 30)}:` is repeated at the end of its body, where the selections are read"
    return plan_on_variant(finding, ctx, variant_text, finding.span.start_line, declined, plan, why)
