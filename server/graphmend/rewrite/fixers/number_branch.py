"""A number chosen by an if/else on a tensor -> the same choice as a conditional expression, when
the scalar fixer then keeps it a tensor.

`if (t < 0).any(): gamma = 0.1` / `else: gamma = 1.0` says what `gamma = 0.1 if (t < 0).any() else
1.0` says. The Where fixer declines it (the values are Python numbers, which `torch.where` would
turn into tensors); the scalar fixer rewrites the conditional expression form (a float64 or int64
0-d tensor chosen by `torch.where`, its uses checked as those of `.item()`). Written as that
expression, the branch is its pattern. The move alone removes no break, so it is applied only
where the look-ahead (lookahead.py) finds the scalar fix on the rewritten line.

Same program: each branch is one assignment of a number literal to the same plain name, with no
`elif`; the test is evaluated once either way, before either value.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...findings import Finding
from ..context import FixContext
from ..lookahead import require_line_fixed_after
from ..model import DeclineError, Fix, Safety

TITLE = "Choose the number `{name}` with a conditional expression, so that it can stay a tensor chosen by torch.where"


class NumberBranchFixer:
    codes = frozenset({"GM101", "GM102", "GM103", "GM104", "GM201", "GM203"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        branch = ctx.statement_of(node) if node is not None else None
        function = ctx.function_of(branch) if branch is not None else None
        if not isinstance(branch, ast.If) or function is None or not ctx.contains(branch.test, node):  # type: ignore[arg-type]
            raise DeclineError("not-a-number-branch", "the tensor is not tested by an `if`")
        name, chosen, other = _numbers(branch)
        test = ctx.code(branch.test)
        needs_parentheses = isinstance(branch.test, (ast.IfExp, ast.Lambda, ast.NamedExpr))
        text = f"{name} = {ctx.code(chosen)} if {f'({test})' if needs_parentheses else test} else {ctx.code(other)}"
        target = ctx.cst_node(function, branch, cst.If)
        # the comments inside the `if` (on its lines, above each assignment) go above the new line
        inside = [cst.EmptyLine(comment=comment) for comment in _comments(target)]
        replacement = cst.parse_statement(text + "\n").with_changes(leading_lines=[*target.leading_lines, *inside])
        edits = [ctx.rewrite(function, {target: replacement})]
        why = f"`{name}` would be chosen by a conditional expression"
        require_line_fixed_after(ctx, edits, finding.function, branch.lineno + len(inside), Safety.SAFE, why)  # below the moved comments
        return Fix(finding, TITLE.format(name=name), Safety.SAFE, tuple(edits))


def _comments(node: cst.If) -> list[cst.Comment]:
    """The comments written inside the `if` statement (not those above it), in order."""
    found: list[cst.Comment] = []
    leading = {id(line) for line in node.leading_lines}

    class Collect(cst.CSTVisitor):
        def visit_EmptyLine(self, line: cst.EmptyLine) -> bool:
            if line.comment is not None and id(line) not in leading:
                found.append(line.comment)
            return False

        def visit_TrailingWhitespace(self, trailing: cst.TrailingWhitespace) -> bool:
            if trailing.comment is not None:
                found.append(trailing.comment)
            return False

    node.visit(Collect())
    return found


def _numbers(branch: ast.If) -> tuple[str, ast.expr, ast.expr]:
    """The name and the two number literals of `if c: name = a` / `else: name = b`."""
    sides = [branch.body, branch.orelse]
    assigned = []
    for side in sides:
        statement = side[0] if len(side) == 1 else None
        if not (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and _number_literal(statement.value)
        ):
            raise DeclineError("not-a-number-branch", "the branches do not each assign one number literal to one name")
        assigned.append((statement.targets[0].id, statement.value))  # type: ignore[union-attr]
    (name, chosen), (other_name, other) = assigned
    if name != other_name:
        raise DeclineError("not-a-number-branch", "the branches assign different names")
    return name, chosen, other


def _number_literal(node: ast.expr) -> bool:
    """`3`, `0.5`, `-1.0`: an int or float literal (not a bool)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)
