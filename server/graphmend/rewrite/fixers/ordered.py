"""Prints, logs, warnings and data-dependent checks -> a custom op with an ordered effect (safe).

The paper's Defer and Trap, done so that nothing observable changes: the statement (or the `if`
holding only such statements) moves into a module-level function that runs as a custom op
(ordered_helper.py) and is called where it stood with the values it reads (ordered_site.py).
Dynamo keeps one graph; at run time the op runs the original code in program order, so the same
text is printed and logged the same number of times, and a failed check raises the same
exception with the same message. A break inside a function that only checks or reports
(check_functions.py) moves each call of that function in the file instead, lifted to the call of
its caller where that caller only reports too (`log_once` -> `log_rank_zero` -> `logger.log`):
a logger passed down as an argument, or a `stacklevel=2` that names the caller, then stays
inside the moved code, where the statement alone could not move.

Metric records count as reports (effects.py: detectron2's `get_event_storage().put_scalar`, a
module-level TensorBoard writer, `wandb.log`): training code reads numbers with `.item()` only to
record them, and those assignments, the recorder's lookup and the reports in a row that read
them move into one op together (`_prelude`, `_following_reports`).

Declines (each with a fixture in tests/fixtures/declines/): what is not only reporting or
checking; loggers that are not module-level names; `warnings.warn(stacklevel>1)`,
`logger.exception`, `exc_info`/`stack_info`/`stacklevel` (they read the caller's frame or the
exception being handled); values whose type a custom op's schema cannot name; calls of local
callables; and a check after the function changed state (in-place writes to inputs, buffers or
attributes, container updates): if the check fails inside the graph, those writes may not have
been applied yet when the exception leaves, while the original had applied them.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, NON_TENSOR_KINDS, TENSOR_KINDS
from ...analysis.symbols import ClassInfo
from ...astwalk import walk
from ...findings import Finding
from ...quoting import excerpt
from ..check_functions import call_statements, check_function_reason, is_check_like, module_state_changed, reaches_check
from ..context import FixContext
from ..effects import MUTATING_METHODS, EffectCall, effect_of, makes_metric_recorder
from ..flow import read_after
from ..model import DeclineError, Fix, Safety
from ..ordered_helper import module_edits, module_edits_for, site_name, site_origin, site_text
from ..ordered_site import build_site, local_names, movable_kind, split_test, statement_node
from ..purity import check_pure, is_pure
from ..py_types import STR, VALUE, Function, own_nodes, value_type

# Declines of a report that reads its caller's frame, or a logger it was passed: the report
# cannot move alone, but the call of a function that only reports may move whole.
_CALLER_BOUND = ("local-logger", "log-caller-info", "warn-stacklevel")


class OrderedEffectFixer:
    # GM202 and GM4xx: only where they stand in a check (`assert x[m].max() <= 1, msg`), moved whole
    codes = frozenset(
        {"GM301", "GM305", "GM306", "GM307", "GM101", "GM104", "GM107", "GM201", "GM203", "GM207", "GM209", "GM202", "GM401", "GM402", "GM403", "GM404", "GM405", "GM406", "GM408"}
    )
    safety = Safety.SAFE
    # for these it takes only the check they stand in: its "not my pattern" says least
    narrow = frozenset({"GM202", "GM401", "GM402", "GM403", "GM404", "GM405", "GM406", "GM408"})

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        if finding.code in self.narrow and not _in_a_check(ctx, finding):
            # most masks and counts are neither in checks nor in reports: say so before the costlier planning
            raise DeclineError("not-effect-only", "the finding is not in a report or a check (`assert`, or an `if` that raises)")
        try:
            return self._plan_statement(finding, ctx)
        except DeclineError as declined:
            if declined.key not in ("not-effect-only", *_CALLER_BOUND):
                raise  # a report or check that cannot move as it is: that is the reason
            node = ctx.node_for(finding)
            function = ctx.function_of(node) if node is not None else None
            if function is None or function not in ctx.tree.body or function.name in ctx.result.entries:
                raise  # a compiled entry's own calls are not in the compiled code: moving them helps nothing
            if declined.key in _CALLER_BOUND:
                # `logger.log(level, msg, stacklevel=2)` with the logger a parameter: the statement
                # cannot move, but a call of a function that only reports can, whole
                try:
                    return _plan_check_calls(finding, ctx, function)
                except DeclineError:
                    raise declined from None
            # `if ok: return` before the check, say: the break is in a function that only checks
            # once per function: an `if` with 2,000 tensor operands has 2,000 findings in one function
            if not ctx.remember(("check-like", id(function)), lambda: is_check_like(function)):
                raise
        try:
            return _plan_check_calls(finding, ctx, function)
        except DeclineError as declined:
            if finding.code in self.narrow and declined.key in ("check-function", "check-function-result", "check-function-no-call"):
                # a mask or count in a function that also raises somewhere, whose calls cannot
                # move: not this fixer's pattern (the selection fixers' reason says more)
                raise DeclineError("not-effect-only", f"the finding is not in a report or a check, and {declined.reason}") from None
            raise

    def _plan_statement(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        stmt = ctx.statement_of(node) if node is not None else None
        function = ctx.function_of(stmt) if stmt is not None else None
        if stmt is None or function is None:
            raise DeclineError("not-in-function", "the code is not inside a function")
        local = local_names(ctx, function)
        try:
            return self._plan_block(finding, ctx, stmt, function, local, bindings=True)
        except DeclineError:
            # the `if` that computes its message moved whole could not be; the report alone may
            if _block(ctx, stmt, local, bindings=False)[0] is _block(ctx, stmt, local, bindings=True)[0]:
                raise
            return self._plan_block(finding, ctx, stmt, function, local, bindings=False)

    def _plan_block(self, finding: Finding, ctx: FixContext, stmt: ast.stmt, function: Function, local: set[str], bindings: bool) -> Fix:
        block, effects = _block(ctx, stmt, local, bindings)
        head = _reporting_head(ctx, block, local, bindings)
        if head:  # `if t: warn(...); x = f(x)`: the test and the reports move, the rest stays
            block = ctx.parent(block)  # type: ignore[assignment]
            effects = [e for s in block.body[:head] for e in effect_of(ctx, s, local) or []]  # type: ignore[attr-defined]
        # `storage.put_scalar(a); storage.put_scalar(b)` after the assignments of `storage`, `a`, `b`:
        # the reports that follow and read what the moved assignments compute move with them
        following = [] if head or not isinstance(block, ast.Expr) else _following_reports(ctx, block, local)
        prelude = _prelude(ctx, function, block, following)
        bound = {name for a in prelude for name in [_single_name(a)] if name is not None}
        while following and not _reads(following[-1], bound):
            following.pop()
        effects = effects + [e for s in following for e in effect_of(ctx, s, local) or []]
        _check_no_tensor_text(ctx, function, [block, *following], prelude)
        if stmt is not block and not any(stmt is a for a in prelude) and not any(stmt is n for n in walk(block)):
            raise DeclineError("not-effect-only", f"`{excerpt(ctx.code(stmt).splitlines()[0], 50)}` does more than compute what a report or check reads")
        peel = 0 if head else _python_prefix(ctx, block)
        if any(e.what == "check" for e in effects):
            _check_no_state_change(ctx, function, block, local)
            _check_nothing_later_fails_on_values(ctx, function, block)
        try:
            site = build_site(ctx, function, block, peel, prelude, head=head, following=following)
        except DeclineError:
            if not prelude or any(stmt is a for a in prelude):
                raise
            prelude, following = [], []  # the block alone still moves; the assignment before it keeps its break
            _check_no_tensor_text(ctx, function, [block], prelude)
            site = build_site(ctx, function, block, peel, head=head)
        unknown = next((p for p in site.params if p.type == VALUE), None)
        if unknown is not None and any(e.what == "report" for e in effects):
            # `log_once(self.logger, ...)`: a value a function of the file takes, of a type the
            # op cannot name: at run time the op would fall back to the original code, and break
            raise DeclineError("unknown-type", f"cannot pass `{unknown.argument}` into the op: its type is not known")
        if ctx.decide_only:  # the checks rendering would make, without rendering (`check`'s `[*]`)
            for moved in (*prelude, block):
                movable_kind(moved)
            module_edits(ctx, function, "")
            return Fix(finding, _title(effects, ctx, block), Safety.SAFE, ())
        what = _word(effects)
        name = site_name(ctx, function, what)
        origin = site_origin(ctx, function)
        call = cst.Expr(cst.parse_expression(f"{name}({', '.join(p.argument for p in site.params)})"))
        target = statement_node(ctx, function, block)
        replacement: cst.CSTNode | cst.FlattenSentinel
        if isinstance(target, cst.If) and head:
            rest = target.body.with_changes(body=target.body.body[head:])
            replacement = cst.FlattenSentinel([cst.SimpleStatementLine([call], leading_lines=target.leading_lines), target.with_changes(body=rest, leading_lines=())])
        elif isinstance(target, cst.If) and peel:
            kept = split_test(target.test, len(block.test.values), peel)[0]  # type: ignore[attr-defined]
            replacement = target.with_changes(test=kept, body=cst.IndentedBlock([cst.SimpleStatementLine([call])]), orelse=None)
        elif isinstance(target, cst.If):
            replacement = cst.SimpleStatementLine([call], leading_lines=target.leading_lines)
        else:
            replacement = call
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {target: replacement}
        for moved in [*prelude, *following]:
            ctx.remove_statement(function, moved, replacements)
        edits = [ctx.rewrite(function, replacements), *module_edits(ctx, function, site_text(ctx, name, site, origin))]
        return Fix(finding, _title(effects, ctx, block), Safety.SAFE, tuple(edits))


def _in_a_check(ctx: FixContext, finding: Finding) -> bool:
    """Whether the finding stands in a call statement (a report), an `assert`, an `if` that raises
    or asserts, or a function that does (whose calls the check-function path may move)."""
    node = ctx.node_for(finding)
    stmt = ctx.statement_of(node) if node is not None else None
    if stmt is None:
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return True  # `print(x[m].mean())`, a report: the full planning decides
    for around in (stmt, *ctx.ancestors(stmt)):
        if isinstance(around, ast.Assert):
            return True
        if isinstance(around, ast.If) and any(isinstance(n, (ast.Raise, ast.Assert)) for s in around.body for n in walk(s)):
            return True
        if isinstance(around, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return around in ctx.tree.body and ctx.remember(("check-like", id(around)), functools.partial(is_check_like, around))
    return False


def _plan_check_calls(finding: Finding, ctx: FixContext, function: Function) -> Fix:
    """The break is inside a function that only checks or reports (check_functions.py): move each
    call of it in this file, as a whole, into an ordered op (the function then runs at run time,
    in program order, with the same arguments, as it did)."""
    own_reason = check_function_reason(ctx, function)
    try:
        statements = _calls_to_move(ctx, function)  # type: ignore[arg-type]
    except DeclineError:
        if own_reason is None:
            raise
        statements = []
    callees = {id(c): c for s in statements for c in [ctx.index.functions[s.value.func.id]]}  # type: ignore[attr-defined]
    for callee in callees.values() if statements else [function]:
        reason = own_reason if callee is function else check_function_reason(ctx, callee)
        if reason is not None:
            raise DeclineError("check-function", f"the break is in `{function.name}`, whose calls could run as ordered ops, but {reason}")
    checks = any(reaches_check(ctx, callee) for callee in callees.values())
    by_caller: dict[int, tuple[Function, dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel]]] = {}
    sites: list[tuple[Function, str]] = []
    taken: set[str] = set()
    blocks: list[ast.stmt] = []
    for statement in statements:
        caller = ctx.function_of(statement)
        if caller is None or caller is function:
            raise DeclineError("check-function-no-call", f"`{function.name}` is called outside a function or by itself")
        local = local_names(ctx, caller)
        for callee in callees.values():
            changed = module_state_changed(ctx, callee, caller)
            if changed is not None:
                raise DeclineError(
                    "module-state", f"`{callee.name}` reads `{changed}`, which `{caller.name}` changes: inside the graph the op would read it before that change"
                )
        block = statement if checks else _widened(ctx, statement, local)
        if any(ctx.contains(moved, block) for moved in blocks):
            continue  # a second call in an `if` already moving whole
        blocks.append(block)
        if checks:  # a report that fails nothing may run before or after the caller's other work
            _check_no_state_change(ctx, caller, statement, local)
            tested = {n.id for n in walk(statement.value) if isinstance(n, ast.Name) and n.id in local}
            _check_nothing_later_fails_on_values(ctx, caller, statement, tested)
        site = build_site(ctx, caller, block, calls_as_values=True)
        unknown = next((p for p in site.params if p.type == VALUE), None)
        if not checks and unknown is not None:
            # `log_once(self.logger, ...)`: at run time the op would fall back to the call, and break
            raise DeclineError("unknown-type", f"cannot pass `{unknown.argument}` into the op: its type is not known")
        name = site_name(ctx, caller, "check" if checks else "report", taken)
        taken.add(name)
        origin = site_origin(ctx, caller)
        call = cst.Expr(cst.parse_expression(f"{name}({', '.join(p.argument for p in site.params)})"))
        target = statement_node(ctx, caller, block)
        replacement = cst.SimpleStatementLine([call], leading_lines=target.leading_lines) if isinstance(target, cst.If) else call
        by_caller.setdefault(id(caller), (caller, {}))[1][target] = replacement
        sites.append((caller, site_text(ctx, name, site, origin)))
    edits = [ctx.rewrite(caller, replacements) for caller, replacements in by_caller.values()]
    edits += module_edits_for(ctx, sites)
    moved = ", ".join(f"`{c.name}`" for c in callees.values())
    if not checks:
        title = (
            f"Run each call of {moved} (it only reports) as an ordered op inside the compiled graph: the same "
            "prints, log records and warnings at run time, in order, no graph break"
        )
        return Fix(finding, title, Safety.SAFE, tuple(edits))
    kinds = sorted({_exception(s) for c in callees.values() for s in walk(c) if isinstance(s, (ast.Raise, ast.Assert))})
    kinds = kinds or sorted({_exception(s) for s in walk(function) if isinstance(s, (ast.Raise, ast.Assert))})
    what = f"the check `{function.name}`" if list(callees.values()) == [function] else f"{moved} (it checks with `{function.name}`)"
    title = (
        f"Run each call of {what} as an ordered op inside the compiled graph: it raises the same "
        f"{' / '.join(kinds)} with the same message, no graph break"
    )
    return Fix(finding, title, Safety.SAFE, tuple(edits))


def _widened(ctx: FixContext, statement: ast.Expr, local: set[str]) -> ast.stmt:
    """The call of a function that only reports, or the `if`s around it that test tensors and
    hold only reports (`if (var < bound).any(): rank_zero_warn(...)`): moved whole, the test
    goes into the op too, and so does its break."""
    try:
        block, effects = _block(ctx, statement, local, bindings=False)
    except DeclineError:
        return statement  # a report beside it that cannot move: the call alone still can
    # an `if` that also raises is a check: it moves by the statement path, with its safeguards
    return statement if any(e.what == "check" for e in effects) else block


def _calls_to_move(ctx: FixContext, function: ast.FunctionDef, depth: int = 0) -> list[ast.Expr]:
    """The statements that call `function` and drop its result, each lifted to the call of its
    caller where that caller is itself a module-level function that only checks or reports
    (`log_once` -> `log_rank_zero` -> `logger.log`) and is compiled only as the callee of compiled
    code (not a compiled entry itself): the outermost such call moves, so a report that names its
    caller's frame (`stacklevel=2`) still names a frame of the moved code, and a logger passed
    down as an argument never has to cross into the op."""
    statements, other = call_statements(ctx, function)
    if other:
        raise DeclineError("check-function-result", f"`{function.name}` is called where its result is used or passed on (`{ctx.excerpt(other[0], 40)}`)")
    if not statements:
        raise DeclineError("check-function-no-call", f"`{function.name}` is not called in this file: the calls to move are in other files")
    moved: dict[int, ast.Expr] = {}
    for statement in statements:
        caller = ctx.function_of(statement)
        lifted: list[ast.Expr] = []
        if depth < 3 and isinstance(caller, ast.FunctionDef) and caller is not function and caller in ctx.tree.body:
            # not past a function compiled in its own right (`torch.compile(validate)`): moving
            # its callers' calls would leave its own compiled frame breaking
            only_called = caller.name in ctx.result.compiled and caller.name not in ctx.result.entries
            if only_called and check_function_reason(ctx, caller) is None:
                try:
                    lifted = _calls_to_move(ctx, caller, depth + 1)
                except DeclineError:
                    lifted = []
        for found in lifted or [statement]:
            moved[id(found)] = found
    return list(moved.values())


def _block(ctx: FixContext, stmt: ast.stmt, local: set[str], bindings: bool) -> tuple[ast.stmt, list[EffectCall]]:
    """The statement to move: the one holding the finding, widened to the enclosing `if`s that
    test tensors and hold only reporting and checks (their test then moves too; with `bindings`,
    also the computing of the text they report). A finding in an assignment whose value only the
    next statement, a report or check, reads moves with it."""
    effects = effect_of(ctx, stmt, local, bindings)
    if effects is None and _single_name(stmt) is not None:
        # `acc = t.item(); n = u.item(); storage = get_event_storage(); storage.put_scalar(...)`:
        # the first report after the assignments (the prelude then takes those it needs)
        following = _next_sibling(ctx, stmt)
        while following is not None and _single_name(following) is not None and effect_of(ctx, following, local, bindings) is None:
            following = _next_sibling(ctx, following)
        if following is not None and (found := effect_of(ctx, following, local, bindings)) is not None:
            stmt, effects = following, found
    if effects is None:
        raise DeclineError("not-effect-only", f"`{excerpt(ctx.code(stmt).splitlines()[0], 50)}` does more than print, log, warn, raise or assert")
    block = stmt
    while True:
        parent = ctx.parent(block)
        if not isinstance(parent, ast.If) or not _tests_tensor(ctx, parent.test):
            return block, effects
        wider = effect_of(ctx, parent, local, bindings)
        if wider is None:
            return block, effects
        block, effects = parent, wider


def _reporting_head(ctx: FixContext, block: ast.stmt, local: set[str], bindings: bool) -> int:
    """How many statements open the `if` around `block` and only report (print, log, warn), when
    that `if` tests a tensor, has no else, and goes on with other work: `if (x < 0).any():
    warnings.warn(...); x = x.clamp(min=0)`. Moving the test with those reports into the op and
    leaving `if <test>: <the rest>` keeps every report exactly when it happened, before the rest
    ran, and leaves an `if` the Where fixer can select over. The test is evaluated twice (as the
    op's argument, then by the `if`), so it must be pure; the reports run before the rest, so they
    read nothing the rest assigns. 0 when this does not apply."""
    parent = ctx.parent(block)
    if not (isinstance(parent, ast.If) and not parent.orelse and _tests_tensor(ctx, parent.test)):
        return 0
    if effect_of(ctx, parent, local, bindings) is not None:  # all of it reports: it moves whole
        return 0
    head = 0
    for statement in parent.body:
        try:
            effects = effect_of(ctx, statement, local)
        except DeclineError:
            effects = None
        if effects is None or isinstance(statement, ast.If) or any(e.what == "check" for e in effects):
            break
        head += 1
    if not any(statement is block for statement in parent.body[:head]):
        return 0
    test = parent.test
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand  # `if not t:` takes the truth value the `if` takes anyway
    try:
        check_pure(ctx, test, "the test (now evaluated for the reports and again for the rest)")
    except DeclineError:
        return 0
    return head


def _prelude(ctx: FixContext, function: Function, block: ast.stmt, following: list[ast.stmt] = ()) -> list[ast.Assign]:  # type: ignore[assignment]
    """The assignments just before `block` that compute names only it (and the reports
    `following` it) read, and that break (`scale = t.max().item()`): moved with it, the break goes
    too. Each name is bound once in the function and read nowhere after the moved statements.

    Between those, an assignment that does not break moves too when moving it is unobservable:
    its value is pure, or it makes the object the reports record into (`storage =
    get_event_storage()`, which cannot be passed to the op). Pure ones at the start of the run
    stay where they are (their values are passed to the op instead)."""
    found: list[ast.Assign] = []
    moved = [block, *following]
    reads = {n.id for s in moved for n in walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    last = moved[-1]
    current: ast.stmt = block
    while True:
        previous = _previous_sibling(ctx, current)
        name = _single_name(previous) if previous is not None else None
        if previous is None or name is None or name not in reads:
            break
        assert isinstance(previous, ast.Assign)
        if read_after(ctx, last, name) or _bindings(function, name) != 1 or name in {n.id for n in walk(previous.value) if isinstance(n, ast.Name)}:
            break
        if not _breaks(ctx, previous) and not makes_metric_recorder(ctx, previous.value) and not is_pure(ctx, previous.value):
            break
        found.insert(0, previous)
        reads |= {n.id for n in walk(previous.value) if isinstance(n, ast.Name)}
        current = previous
    while found and not _breaks(ctx, found[0]) and not makes_metric_recorder(ctx, found[0].value):
        found.pop(0)
    if not any(_breaks(ctx, a) for a in found):
        return []  # nothing to gain: none of them breaks
    return found


def _breaks(ctx: FixContext, assignment: ast.Assign) -> bool:
    """The assignment must move with the block: it breaks, or it formats a tensor into text
    (`msg = f"step {n}: x={x}"`), which dynamo builds while tracing as a value no op can take."""
    span = ctx.span(assignment.value)
    return any(span.contains(f.span) for f in ctx.result.findings) or formats_tensor(ctx, assignment.value, ctx.function_of(assignment))


def _check_no_tensor_text(ctx: FixContext, function: Function, moved: list[ast.stmt], prelude: list[ast.Assign]) -> None:
    """Decline where the moved code reads a local holding text formatted from a tensor that stays
    behind (it is read again later, or bound more than once): dynamo cannot pass that text to the
    op, so the call would break where the original statement did."""
    reads = {n.id for s in moved for n in walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    staying = {id(a) for a in prelude}
    for node in own_nodes(function):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or node.value is None or id(node) in staying:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        bound = {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)}
        name = next((n for n in sorted(bound) if n in reads), None)
        if name is not None and formats_tensor(ctx, node.value, function):
            raise DeclineError(
                "tensor-text",
                f"`{name}` holds text formatted from a tensor (`{ctx.excerpt(node.value, 40)}`, line {node.lineno}), which dynamo cannot pass into the op",
            )


def formats_tensor(ctx: FixContext, value: ast.expr, function: Function | None = None) -> bool:
    """`value` builds text from a tensor's values: an f-string field, `str`/`repr`/`format` of
    one, `"...".format(t)`, or `"..." % t` (with `function`, where a text's type is known)."""
    for node in walk(value):
        if isinstance(node, ast.FormattedValue) and ctx.kind(node.value) in TENSOR_KINDS:
            return True
        if isinstance(node, ast.Call):
            name = ctx.qualname(node.func)
            # `.format` of anything but a tensor is taken for str.format (`TEMPLATE.format(x)`)
            textual = name in ("builtins.str", "builtins.repr", "builtins.format") or (
                isinstance(node.func, ast.Attribute) and node.func.attr == "format" and ctx.kind(node.func.value) not in TENSOR_KINDS
            )
            if textual and any(ctx.kind(a) in TENSOR_KINDS for a in [*node.args, *(k.value for k in node.keywords)]):
                return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and function is not None and value_type(ctx, node.left, function) == STR:
            operands = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            if any(ctx.kind(o) in TENSOR_KINDS for o in operands):
                return True
    return False


def _following_reports(ctx: FixContext, block: ast.stmt, local: set[str]) -> list[ast.stmt]:
    """The statements right after `block` that only print, log, warn or record (no checks: a
    check that moves must not change what ran before it)."""
    found: list[ast.stmt] = []
    following = _next_sibling(ctx, block)
    while isinstance(following, ast.Expr):
        try:
            effects = effect_of(ctx, following, local)
        except DeclineError:
            break
        if effects is None or any(e.what == "check" for e in effects):
            break
        found.append(following)
        following = _next_sibling(ctx, following)
    return found


def _single_name(stmt: ast.stmt | None) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _previous_sibling(ctx: FixContext, stmt: ast.stmt) -> ast.stmt | None:
    block = ctx.block_of(stmt)
    index = next((i for i, s in enumerate(block) if s is stmt), 0)
    return block[index - 1] if index > 0 else None


def _next_sibling(ctx: FixContext, stmt: ast.stmt) -> ast.stmt | None:
    block = ctx.block_of(stmt)
    index = next((i for i, s in enumerate(block) if s is stmt), len(block))
    return block[index + 1] if index + 1 < len(block) else None


def _bindings(function: Function, name: str) -> int:
    return sum(1 for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store))


def _tests_tensor(ctx: FixContext, test: ast.expr) -> bool:
    return any(ctx.kind(n) in TENSOR_KINDS for n in walk(test) if isinstance(n, ast.expr))


def _python_prefix(ctx: FixContext, block: ast.stmt) -> int:
    """How many leading conditions of `if a and b and <tensor test>:` (no else) are plain Python:
    they stay in the graph (dynamo knows them), so the op is only called when they hold."""
    if not (isinstance(block, ast.If) and not block.orelse and isinstance(block.test, ast.BoolOp) and isinstance(block.test.op, ast.And)):
        return 0
    count = 0
    for value in block.test.values[:-1]:
        if not _identity_test(value) and _tests_tensor(ctx, value):
            break
        count += 1
    return count


def _identity_test(test: ast.expr) -> bool:
    """`x is None`, `x is not None`, `isinstance(x, T)`: dynamo knows these of a tensor too."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _identity_test(test.operand)
    if isinstance(test, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops)
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("isinstance", "hasattr", "callable")


def _check_no_state_change(ctx: FixContext, function: Function, block: ast.stmt, local: set[str]) -> None:
    """Decline a check in a function that changes state outside itself. Before the check: if the
    check fails inside the graph, the change may not have been applied yet when the exception
    leaves. After it: inductor orders the op only among effects, so a later in-place write to an
    input or a buffer could already have happened."""
    params = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    inside = {id(n) for n in walk(block)}
    for node in own_nodes(function):
        if id(node) in inside or getattr(node, "lineno", None) is None:
            continue
        outer = _outer_root(node, params, local)
        if outer is not None:
            when = "before" if node.lineno < block.lineno else "after"  # type: ignore[attr-defined]
            raise DeclineError(
                "state-change-and-check",
                f"`{excerpt(ctx.code(node).splitlines()[0], 50)}` changes {outer} {when} the check: inside the graph the order of "
                "that change and a failing check is not kept",
            )


# Operations that raise on tensor *values* (an index out of range, a negative count): inside the
# graph, inductor may run them before the moved check, so an input the check rejects could raise
# their error instead of the check's (seen: `labels.max() >= vocab` then `cross_entropy`).
VALUE_CHECKING_CALLS = frozenset(
    {
        "torch.gather", "torch.index_select", "torch.take", "torch.take_along_dim", "torch.bincount",
        "torch.multinomial", "torch.scatter", "torch.scatter_add", "torch.index_add", "torch.index_copy",
        "torch.index_fill", "torch.index_put", "torch.repeat_interleave", "torch.embedding", "torch._assert_async",
        "torch.nn.functional.embedding", "torch.nn.functional.embedding_bag", "torch.nn.functional.one_hot",
        "torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss", "torch.nn.functional.ctc_loss",
        "torch.nn.functional.multi_margin_loss", "torch.nn.functional.multilabel_margin_loss",
    }
)
VALUE_CHECKING_METHODS = frozenset(
    {
        "gather", "index_select", "take", "take_along_dim", "bincount", "multinomial", "scatter", "scatter_",
        "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_add", "index_add_", "index_copy",
        "index_copy_", "index_fill", "index_fill_", "index_put", "index_put_", "put_", "repeat_interleave",
    }
)
VALUE_CHECKING_MODULES = frozenset({"Embedding", "EmbeddingBag", "CrossEntropyLoss", "NLLLoss", "CTCLoss", "MultiMarginLoss"})


def _check_nothing_later_fails_on_values(ctx: FixContext, function: Function, block: ast.stmt, tested: set[str] | None = None) -> None:
    """Decline a check followed, in the same function, by an operation that raises on the values
    the check tests: the original raised the check's exception first; in the graph, that
    operation's own error could come first (wav2vec2: `labels.max() >= vocab` then `ctc_loss(labels)`).

    "The values the check tests" are the names its test reads and every name assigned after it
    from one of those (followed in source order); an operation on unrelated values (xlm's
    `lengths` check, then the embedding of `input_ids`) cannot fail on the inputs the check rejects
    any more than the original could."""
    end = block.end_lineno or block.lineno
    tests = [n for n in walk(block) if isinstance(n, (ast.If, ast.Assert, ast.While))]
    modules = set(ctx.index.imports) | {"self", "cls"}  # `torch.`, `self.config`: not the values tested
    # the tensors tested (a Python number the test compares with, such as a length, is not data)
    tainted = set(tested or ()) | {
        n.id
        for t in tests
        for n in walk(t.test)  # type: ignore[attr-defined]
        if isinstance(n, ast.Name) and n.id not in modules and ctx.kind(n) not in NON_TENSOR_KINDS
    }
    if not tainted:
        return
    cls = next((a for a in ctx.ancestors(function) if isinstance(a, ast.ClassDef)), None)
    info = ctx.index.classes.get(cls.name) if cls is not None else None
    later = sorted((n for n in own_nodes(function) if getattr(n, "lineno", 0) > end), key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    for node in later:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None and _reads(node.value, tainted):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            tainted |= {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name) and n.id not in modules}
            continue
        failing = _fails_on_values(ctx, node, info)
        if failing is not None and _reads(node, tainted):
            raise DeclineError(
                "fails-on-values-after-check",
                f"`{excerpt(ctx.code(node).splitlines()[0], 50)}` ({failing}) raises on some values of what the check tests: inside the "
                "graph it may run first and raise its own error where the check raised",
            )


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(node))


def _fails_on_values(ctx: FixContext, node: ast.AST, info: ClassInfo | None) -> str | None:
    """What in `node` raises on tensor values (an index out of range...), or None."""
    if isinstance(node, ast.Call):
        name = ctx.qualname(node.func)
        if name in VALUE_CHECKING_CALLS:
            return name
        if isinstance(node.func, ast.Attribute) and node.func.attr in VALUE_CHECKING_METHODS and ctx.kind(node.func.value) in TENSOR_KINDS:
            return f".{node.func.attr}()"
        if info is not None and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            module_class = ctx.index.attr_torch_class(info, node.func.attr)
            if module_class in VALUE_CHECKING_MODULES:
                return f"nn.{module_class}"
    elif isinstance(node, ast.Subscript) and ctx.kind(node.slice) in TENSOR_KINDS and ctx.kind(node.slice) not in BOOL_KINDS:
        return "indexing with a tensor"
    return None


def _outer_root(node: ast.AST, params: set[str], local: set[str]) -> str | None:
    """What `node` changes outside the function's own fresh values (a parameter, an attribute,
    a global), or None."""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return "a variable outside the function"
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    for target in targets:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            root = _root(target)
            if root is None or root in params or root not in local:
                return f"`{root}`" if root else "an object"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        in_place = method.endswith("_") and not method.startswith("_")
        if in_place or method in MUTATING_METHODS:
            root = _root(node.func.value)
            if root is None or root in params or root not in local:
                return f"`{root}`" if root else "an object"
    return None


def _root(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _word(effects: list[EffectCall]) -> str:
    kinds = {e.what for e in effects}
    return kinds.pop() if len(kinds) == 1 else "effects"


def _title(effects: list[EffectCall], ctx: FixContext, block: ast.stmt) -> str:
    calls = sorted({f"`{e.callee}`" for e in effects if e.what != "check"})
    if any(e.what == "check" for e in effects):
        kinds = sorted({_exception(s) for s in walk(block) if isinstance(s, (ast.Raise, ast.Assert))})
        if any(isinstance(n, ast.Call) and ctx.qualname(n.func) == "torch._assert" for n in walk(block)):
            kinds = sorted({*kinds, "AssertionError"})  # `torch._assert(cond, msg)` raises it
        raised = " / ".join(kinds)
        also = f" (and {', '.join(calls)})" if calls else ""
        return f"Run this check{also} as an ordered op inside the compiled graph: it raises the same {raised} with the same message, no graph break"
    return f"Run {', '.join(calls)} as an ordered op inside the compiled graph: same output, same count, in program order, no graph break"


def _exception(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Assert):
        return "AssertionError"
    exc = stmt.exc  # type: ignore[attr-defined]
    func = exc.func if isinstance(exc, ast.Call) else exc
    return ast.unparse(func) if func is not None else "exception"
