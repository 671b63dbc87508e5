"""Would a follow-up fix apply? Plan it on the code a fix is about to write.

Some fixes only pay when another fix follows: keeping `n = t.item()` as a 0-d tensor turns
`if n > 0:` into a branch on a tensor, which removes the break only if the Where fixer (or another
safe fixer for GM101) can then rewrite that `if`. Without the follow-up the break would just move
from `.item()` to the `if`. The fixer asks here before it commits: the edits are applied to the
text, the result analysed as the engine will analyse it on its next round, and the findings at
the named places planned at the same fix level.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace

from ..analysis import AnalysisResult, analyze_detailed
from ..astwalk import child_nodes
from ..config import Config
from ..findings import Edit, Finding
from ..textedits import apply_edits
from .context import FixContext
from .model import Declined, DeclineError, Safety
from .nesting import MAX_DEPTH, nested
from .py_types import Function


def require_branches_fixed_after(ctx: FixContext, edits: Sequence[Edit], function: Function, qualname: str, branches: Sequence[ast.If], level: Safety, why: str) -> None:
    """Decline unless, after `edits`, each `if` of `branches` (statements of `function`, whose
    qualified name is `qualname`) tests a tensor and has a fix at `level`. `why` names what the
    first fix would leave behind. The edits may move lines but add or remove no `if`: each branch is
    found again as the same `if`, counted in source order, of the same function."""
    with nested(_too_deep(why)):
        _check_branches_fixed_after(ctx, edits, function, qualname, branches, level, why)


def _too_deep(why: str) -> DeclineError:
    return DeclineError("plan-depth", f"{why}, and whether a fix would follow is not decided: fixes planned {MAX_DEPTH} deep")


def _check_branches_fixed_after(ctx: FixContext, edits: Sequence[Edit], function: Function, qualname: str, branches: Sequence[ast.If], level: Safety, why: str) -> None:
    from .engine import plan_fix  # the engine plans with the fixers, one of which asks here

    order = _own_branches(function)
    result = _reanalysed(ctx, edits, qualname)
    rewritten = _function_named(result.tree, qualname) if result.tree is not None else None
    if rewritten is None:
        raise DeclineError("follow-up", f"{why}, and the rewritten function could not be found again")
    after_order = _own_branches(rewritten)
    if len(after_order) != len(order):
        raise DeclineError("follow-up", f"{why}, and the rewritten function has other branches")
    after = FixContext(result)
    for branch in branches:
        test = after_order[next(i for i, b in enumerate(order) if b is branch)].test
        findings = [f for f in result.findings if f.code == "GM101" and f.function == qualname and test.lineno <= f.span.start_line <= (test.end_lineno or test.lineno)]
        if not findings:
            raise DeclineError("follow-up", f"{why}: `if {ctx.excerpt(branch.test, 40)}` was expected to become a branch on a tensor and did not")
        for finding in findings:
            outcome = plan_fix(finding, after, level)
            if isinstance(outcome, Declined):
                raise DeclineError("follow-up", f"{why}, where the branch would still break: {outcome.reason}")


def require_tests_fixed_after(
    ctx: FixContext, edits: Sequence[Edit], function: Function, qualname: str, branch: ast.If, level: Safety, why: str, also: tuple[int, int] | None = None
) -> None:
    """Decline unless, after `edits`, every finding in the test of `branch` (an `if` of
    `function`, found again as the same `if` in source order) and on the lines `also` (which the
    edits do not move) has a fix at `level`, and there is one: the edits only move code into that
    test, which then must be what a fixer rewrites. Each finding of a held condition asks with the
    same edits: the answer is remembered per edits (each costs a re-analysis of the file)."""
    key = ("tests-fixed-after", qualname, tuple((e.span, e.new_text) for e in edits), id(branch), also, level)
    with nested(_too_deep(why)):
        ctx.remember_or_decline(key, lambda: _check_tests_fixed_after(ctx, edits, function, qualname, branch, level, why, also))


def _check_tests_fixed_after(
    ctx: FixContext, edits: Sequence[Edit], function: Function, qualname: str, branch: ast.If, level: Safety, why: str, also: tuple[int, int] | None
) -> None:
    order = _own_branches(function)
    result = _reanalysed(ctx, edits, qualname)
    rewritten = _function_named(result.tree, qualname) if result.tree is not None else None
    after_order = _own_branches(rewritten) if rewritten is not None else []
    if len(after_order) != len(order):
        raise DeclineError("follow-up", f"{why}, and the rewritten function could not be matched with the original")
    test = after_order[next(i for i, b in enumerate(order) if b is branch)].test
    ranges = [(test.lineno, test.end_lineno or test.lineno), *([also] if also else [])]
    _require_all_fixed(result, [f for f in result.findings if f.function == qualname and any(a <= f.span.start_line <= b for a, b in ranges)], level, why)


def require_line_fixed_after(ctx: FixContext, edits: Sequence[Edit], qualname: str, line: int, level: Safety, why: str) -> None:
    """Decline unless, after `edits`, the findings of function `qualname` that start on `line` (of
    the rewritten text: the edits must leave the lines above it as they were) have fixes at
    `level`, and there is one."""
    with nested(_too_deep(why)):
        result = _reanalysed(ctx, edits, qualname)
        _require_all_fixed(result, [f for f in result.findings if f.function == qualname and f.span.start_line == line], level, why)


def _reanalysed(ctx: FixContext, edits: Sequence[Edit], qualname: str) -> AnalysisResult:
    """The file as `edits` would leave it, analysed as the engine's next round will (walking `qualname`)."""
    return analyze_detailed(apply_edits(ctx.text, list(edits)), ctx.result.path, focused(ctx, qualname), keep_facts=True)


def _require_all_fixed(result: AnalysisResult, findings: list[Finding], level: Safety, why: str) -> None:
    """Decline unless `findings` (of the re-analysed `result`) are some, and each has a fix at `level`."""
    from .engine import plan_fix  # the engine plans with the fixers, one of which asks here

    if not findings:
        raise DeclineError("follow-up", f"{why}, where no finding was expected to remain for a fixer to rewrite")
    after = FixContext(result)
    for finding in findings:
        outcome = plan_fix(finding, after, level, riskier=False)
        if isinstance(outcome, Declined):
            raise DeclineError("follow-up", f"{why}, where it would still break: {outcome.reason}")


def focused(ctx: FixContext, qualname: str) -> Config:
    """The file's configuration, walking only the entry whose walk reached `qualname` (itself,
    where it is an entry): the variant differs from the file in that function only, and the
    other entries' walks were most of the time of an analysis of a large file; a helper such as a
    model's `get_placeholder_mask`, reached from one forward, had every entry walked. (Where
    another entry also calls the function, its walk from there is left out: the engine's next
    full analysis still has the last word.)"""
    return replace(ctx.result.config or Config(), focus=(ctx.result.roots.get(qualname, qualname),))


def _own_branches(function: Function) -> list[ast.If]:
    """The `if` statements of `function` itself (not of functions or classes inside it), in source order."""
    found: list[ast.If] = []
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If):
            found.append(node)
        stack.extend(reversed(child_nodes(node)))
    return found


def _function_named(tree: ast.Module, qualname: str) -> Function | None:
    """The function whose `__qualname__` (as findings name functions) is `qualname`."""
    def search(body: list[ast.stmt], prefix: str) -> Function | None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{node.name}"
                if name == qualname:
                    return node
                if qualname.startswith(f"{name}.<locals>."):
                    return search(node.body, f"{name}.<locals>.")
            elif isinstance(node, ast.ClassDef) and qualname.startswith(f"{prefix}{node.name}."):
                found = search(node.body, f"{prefix}{node.name}.")
                if found is not None:
                    return found
        return None

    return search(tree.body, "")
