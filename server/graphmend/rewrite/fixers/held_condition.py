"""A condition held in a name before the `if` that tests it -> the condition written in the `if`,
when a fixer then rewrites that `if`.

Code nobody here wrote names its conditions: `is_bad = torch.isnan(loss).any()` then `if is_bad:`,
`done = (x > tol).all()` then `if not done:`. The Where, ordered-op and scalar fixers read the
condition where the `if` tests it; held in a name, the branch breaks all the same and they decline
("the condition is not the test of an `if`", "the number is used where a tensor would not do").
Written back into the test, the `if` is the pattern they rewrite. The move alone removes no break,
so it is applied only where the look-ahead (lookahead.py) finds that every finding then in the
test has a fix at the same level.

Same program: the name is bound once and read once, by the test; the assignment and the `if` are
in one block, and what runs between them only binds other names to pure values; the condition is
evaluated as often as before (once per pass through the `if`, which runs whenever the assignment
did). Where it would now run later than the statements between, or only when an earlier operand
of the test lets it (`if self.training and is_bad:`), it must be pure (purity.py): evaluated later
or not at all, it cannot be told apart.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...astwalk import walk
from ...findings import Finding
from ..context import FixContext
from ..lookahead import require_tests_fixed_after
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..py_types import Function

TITLE = "Write the condition held in `{name}` into the `if` that tests it, so the `if` can keep the graph"
# Expressions that need no parentheses wherever a name stood.
ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


class HeldConditionFixer:
    codes = frozenset({"GM101", "GM102", "GM103", "GM104", "GM201", "GM203", "GM207", "GM209", "GM402"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        statement = ctx.statement_of(node) if node is not None else None
        function = ctx.function_of(statement) if statement is not None else None
        if statement is None or function is None:
            raise DeclineError("not-a-held-condition", "the code is not inside a function")
        assignment, branch, use = _held(ctx, function, statement)
        name = use.id
        if any(isinstance(s, (ast.Break, ast.Continue)) for s in [*branch.body, *branch.orelse]):
            # no fixer rewrites a branch that leaves a loop (LayerDrop's `if p < drop: continue`):
            # said before the look-ahead, which re-analyses the file
            raise DeclineError("held-condition-jump", f"the `if` that tests `{name}` leaves a loop (`break`/`continue`), which no fix rewrites")
        siblings = ctx.block_of(assignment)
        if not any(s is branch for s in siblings):
            raise DeclineError("held-condition-apart", f"`{name}` is assigned in another block than the `if` that tests it")
        start = next(i for i, s in enumerate(siblings) if s is assignment)
        end = next(i for i, s in enumerate(siblings) if s is branch)
        between = siblings[start + 1 : end]
        value = assignment.value
        read = {n.id for n in walk(value) if isinstance(n, ast.Name)}
        for statement_between in between:
            _check_unobservable(ctx, statement_between, read)
        if between or not _evaluated_first(branch.test, use):
            check_pure(ctx, value, f"the condition held in `{name}` (now evaluated at the `if`)")
        code = ctx.code(value)
        text = code if isinstance(value, ATOMIC) or branch.test is use else f"({code})"
        target = ctx.cst_node(function, use, cst.Name)
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {target: cst.parse_expression(text)}
        ctx.remove_statement(function, assignment, replacements)
        edits = [ctx.rewrite(function, replacements)]
        why = f"the condition held in `{name}` would be tested by its `if`"
        # where the finding is in a value the condition reads (`s = t.item()` before `positive = s > 0`), it stays there
        also = None if statement is assignment or statement is branch else (statement.lineno, statement.end_lineno or statement.lineno)
        require_tests_fixed_after(ctx, edits, function, finding.function, branch, Safety.SAFE, why, also)
        return Fix(finding, TITLE.format(name=name), Safety.SAFE, tuple(edits))


def _held(ctx: FixContext, function: Function, statement: ast.stmt, follow: bool = True) -> tuple[ast.Assign, ast.If, ast.Name]:
    """The assignment, the `if` and the one read of the name in its test, from either end (with
    `follow`, also from a value that the held condition reads)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        name = statement.targets[0].id
        reads = _reads(ctx, function, name)
        if len(reads) == 1:
            branch = ctx.statement_of(reads[0])
            if isinstance(branch, ast.If) and ctx.contains(branch.test, reads[0]):
                _bound_once(ctx, function, name)
                return statement, branch, reads[0]
        # `s = t.sum().item()` read by `positive = s > 0`, which only an `if` reads: that one
        for read in reads if follow else []:
            holder = ctx.statement_of(read)
            if isinstance(holder, ast.Assign) and holder is not statement and ctx.contains(holder.value, read):
                try:
                    return _held(ctx, function, holder, follow=False)
                except DeclineError:
                    continue
        raise DeclineError("held-condition-reads", f"`{name}` is not a condition that only an `if` test reads")
    if isinstance(statement, ast.If):
        names = [n for n in walk(statement.test) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        for use in names:
            if len(_reads(ctx, function, use.id)) != 1:
                continue
            assignment = _only_assignment(ctx, function, use.id)
            if assignment is not None:
                _bound_once(ctx, function, use.id)
                return assignment, statement, use
    raise DeclineError("not-a-held-condition", "the test reads no condition held in a name")


class _Names:
    """Every name's reads, bindings and one-name assignments in a function (nested functions
    included), gathered in one walk: a function with hundreds of findings asks for many names."""

    def __init__(self, function: Function) -> None:
        self.reads: dict[str, list[ast.Name]] = {}
        self.stores: dict[str, int] = {}
        self.assignments: dict[str, list[ast.Assign]] = {}
        self.declared: set[str] = set()
        for node in walk(function):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.reads.setdefault(node.id, []).append(node)
                else:
                    self.stores[node.id] = self.stores.get(node.id, 0) + 1
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assignments.setdefault(node.targets[0].id, []).append(node)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.declared.update(node.names)
        self.parameters = {a.arg for a in walk(function.args) if isinstance(a, ast.arg)}


def _names(ctx: FixContext, function: Function) -> _Names:
    return ctx.remember(("held-condition-names", id(function)), lambda: _Names(function))


def _reads(ctx: FixContext, function: Function, name: str) -> list[ast.Name]:
    """Every read of `name` in the function, nested functions included (a closure reads it too)."""
    return _names(ctx, function).reads.get(name, [])


def _only_assignment(ctx: FixContext, function: Function, name: str) -> ast.Assign | None:
    found = _names(ctx, function).assignments.get(name, [])
    return found[0] if len(found) == 1 else None


def _bound_once(ctx: FixContext, function: Function, name: str) -> None:
    names = _names(ctx, function)
    if names.stores.get(name, 0) != 1 or name in names.declared or name in names.parameters:
        raise DeclineError("held-condition-rebound", f"`{name}` is bound more than once, or outside the function")


def _check_unobservable(ctx: FixContext, statement: ast.stmt, read: set[str]) -> None:
    """A statement the condition's evaluation now moves past: it binds other names to pure values."""
    if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
        return
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if all(isinstance(t, ast.Name) and t.id not in read for t in targets):
            check_pure(ctx, statement.value, f"`{ctx.excerpt(statement, 40)}` (the condition would now be evaluated after it)")
            return
    raise DeclineError(
        "held-condition-moved-past", f"`{ctx.excerpt(statement, 40)}` runs between the condition and its `if`, which may change what the condition reads"
    )


def _evaluated_first(test: ast.expr, use: ast.Name) -> bool:
    """Whether `use` is what the test evaluates first, and always: `c`, `not c`, `c and x`, `c == 0`."""
    while True:
        if test is use:
            return True
        if isinstance(test, ast.UnaryOp):
            test = test.operand
        elif isinstance(test, ast.BoolOp):
            test = test.values[0]
        elif isinstance(test, ast.Compare):
            test = test.left
        else:
            return False
