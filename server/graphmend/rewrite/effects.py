"""Which statements only report or check: prints, log records, warnings, raises and asserts.

These are the statements the ordered-effect fix (fixers/ordered.py) may move into a custom op:
nothing after them reads anything they compute, so running them as an opaque operation inside the
graph - in program order, with the same arguments - is the same program. The tables are data: a
call is an effect when its callee is listed here, and each exclusion says what would change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..analysis.kinds import TENSOR_KINDS, Kind
from ..astwalk import walk
from .context import FixContext
from .flow import read_after
from .model import DeclineError
from .purity import RANDOM
from .py_types import own_nodes

# Qualified callees that only write output, with the word a fix title uses for them.
EFFECT_FUNCTIONS: dict[str, str] = {
    "builtins.print": "print",
    "sys.stdout.write": "print",
    "sys.stderr.write": "print",
    "logging.debug": "log",
    "logging.info": "log",
    "logging.warning": "log",
    "logging.warn": "log",
    "logging.error": "log",
    "logging.critical": "log",
    "logging.fatal": "log",
    "logging.log": "log",
    "warnings.warn": "warning",
    # experiment trackers: one record per call, nothing the caller reads back
    "wandb.log": "metric",
    "mlflow.log_metric": "metric",
    "mlflow.log_metrics": "metric",
}
# Objects that only record metrics, by the last name of what makes them, with the methods that
# add one record and return nothing the caller reads: detectron2's `get_event_storage()` (the
# running trainer's EventStorage) and TensorBoard's `SummaryWriter` (torch.utils.tensorboard,
# tensorboardX). A method call on one made in the function (`storage = get_event_storage()`) is
# an effect only where that assignment moves into the op with it: the object cannot be passed.
METRIC_RECORDERS: dict[str, frozenset[str]] = {
    "get_event_storage": frozenset({"put_scalar", "put_scalars", "put_histogram"}),
    "SummaryWriter": frozenset({"add_scalar", "add_scalars", "add_histogram", "add_text"}),
}
# Methods of a module-level logger that emit one record (transformers adds the *_once variants,
# which keep their own memory of what was emitted: still once per process after the move).
LOGGER_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "critical", "fatal", "log", "warning_once", "info_once", "warning_advice"}
)
# Logging keywords that read the caller's frame or the exception being handled: inside the op the
# caller is the op's own function and no exception is being handled, so the record would differ.
CALLER_KEYWORDS = frozenset({"exc_info", "stack_info", "stacklevel"})


@dataclass(frozen=True)
class EffectCall:
    """One effect call found in a block: what it does, and the callee's source (for titles)."""

    what: str  # "print", "log", "warning", "metric", "check", "report" (a function of the file that only reports)
    callee: str


def effect_of(ctx: FixContext, stmt: ast.stmt, local: set[str], bindings: bool = False) -> list[EffectCall] | None:
    """The effects of `stmt` when it only reports or checks (nested `if`s included), else None.
    With `bindings`, an `if`'s arms may also compute the text they report (_quiet_binding).

    Raises DeclineError when it is an effect the move cannot keep exactly (a logger held in a
    local or an attribute, `warnings.warn(stacklevel=2)`, `logger.exception`, a bare `raise`)."""
    if isinstance(stmt, ast.Pass):
        return []
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and ctx.qualname(stmt.value.func) == "torch._assert":
        return [EffectCall("check", ctx.excerpt(stmt.value, 40))]  # `assert` as a function: it raises AssertionError
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        found = _effect_call(ctx, stmt.value, local)
        return [found] if found is not None else None
    if isinstance(stmt, ast.Raise):
        if stmt.exc is None:
            raise DeclineError("bare-raise", "a bare `raise` re-raises the exception being handled, which the op cannot see")
        return [EffectCall("check", ctx.excerpt(stmt.exc, 40))]
    if isinstance(stmt, ast.Assert):
        return [EffectCall("check", ctx.excerpt(stmt.test, 40))]
    if isinstance(stmt, ast.If):
        effects: list[EffectCall] = []
        bound: set[str] = set()  # names the arms compute a report's text in
        for arm in (stmt.body, stmt.orelse):
            prelude = _raising_prelude(ctx, arm)
            in_arm: set[str] = set()  # bound by a plain assignment of the arm itself, so far
            for inner in arm[prelude:]:
                names = _quiet_binding(ctx, inner) if bindings else None
                if names is not None:
                    if isinstance(inner, (ast.Assign, ast.AnnAssign)):
                        in_arm |= names
                    elif not names <= in_arm:
                        # `msg += ...` or a nested `if` binding a name the arm has not bound
                        # first: its value would come from before the moved code
                        return None
                    bound |= names
                    continue
                found_inner = effect_of(ctx, inner, local, bindings)
                if found_inner is None:
                    return None
                effects.extend(found_inner)
        if bound and (not effects or any(read_after(ctx, stmt, name) for name in bound)):
            return None  # only computing, or computing what later code reads: not a report alone
        return effects
    return None


def _quiet_binding(ctx: FixContext, stmt: ast.stmt) -> set[str] | None:
    """The local names `stmt` binds when it only computes them quietly: `warn_string = "..."`,
    `warn_string += f"... {self.config.pad_token_id} ..."`, or an `if` on a quiet test whose arms do
    only that (transformers' `warn_if_padding_and_no_attention_mask` builds its message so before
    `logger.warning_once(warn_string)`). Moved into the op with the report that reads them, they run
    exactly when they ran, and (effect_of checks) nothing after the `if` reads what they bound.
    None for anything else."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return {stmt.targets[0].id} if _quiet(ctx, stmt.value) else None
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return {stmt.target.id} if _quiet(ctx, stmt.value) else None
    if isinstance(stmt, ast.If) and _quiet(ctx, stmt.test):
        names: set[str] = set()
        for inner in (*stmt.body, *stmt.orelse):
            found = set() if isinstance(inner, ast.Pass) else _quiet_binding(ctx, inner)
            if found is None:
                return None
            names |= found
        return names
    return None


def _raising_prelude(ctx: FixContext, arm: list[ast.stmt]) -> int:
    """How many statements open an arm that always ends by raising, and only compute names for
    its message (torchvision's degenerate-box check: `bb_idx = torch.where(...)[0][0]`, `degen_bb =
    boxes[bb_idx].tolist()`, then `torch._assert(False, f"... {degen_bb} ...")`). Inside the op
    they run exactly when they ran (the arm's test holds), before the same raise, and nothing after
    the arm can read what they bound: the arm never falls through. Their values must not change
    anything (no in-place method, no container update, no random draw, no I/O): 0 otherwise."""
    if not arm or not _always_raises(ctx, arm[-1]):
        return 0
    count = 0
    for statement in arm[:-1]:
        plain = isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        annotated = isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if not (plain or annotated) or value is None or not _quiet(ctx, value):
            break
        count += 1
    return count


def _always_raises(ctx: FixContext, statement: ast.stmt) -> bool:
    """`raise E(...)`, `torch._assert(False, msg)` (not `assert False`: `python -O` drops it, and
    the arm would fall through with the names it bound)."""
    if isinstance(statement, ast.Raise):
        return statement.exc is not None
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and ctx.qualname(statement.value.func) == "torch._assert":
        test = statement.value.args[0] if statement.value.args else None
        return isinstance(test, ast.Constant) and test.value is False
    return False


# Methods that change the object they are called on (containers, caches).
MUTATING_METHODS = frozenset({"update", "append", "extend", "insert", "pop", "popitem", "clear", "add", "setdefault", "remove", "discard", "reset"})
# Calls that only compute a value from their arguments (builtins and conversions a message uses).
_QUIET_BUILTINS = frozenset({"len", "str", "repr", "int", "float", "bool", "list", "tuple", "min", "max", "abs", "round", "sum", "type", "format", "sorted"})
# What else a message's computation may not call: writes, backward, draws and seeding, the process's torch state.
_NOISY = MUTATING_METHODS | RANDOM | {"write", "backward", "seed", "manual_seed", "save", "load", "set_rng_state", "set_default_device", "set_default_dtype"}


def _quiet(ctx: FixContext, value: ast.expr) -> bool:
    """Whether evaluating `value` changes nothing outside it (see _raising_prelude)."""
    for node in walk(value):
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda)):
            return False
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = ctx.qualname(func)
        last = name.rsplit(".", 1)[-1] if name is not None else (func.attr if isinstance(func, ast.Attribute) else None)
        if last is None or last in _NOISY:
            return False
        if last.endswith("_") and not last.startswith("_"):
            return False  # an in-place tensor method
        if name is not None and name.startswith("builtins."):
            if last not in _QUIET_BUILTINS:
                return False
        elif name is not None and not name.startswith("torch."):
            return False  # a function whose effects are not known
        elif name is None and not (isinstance(func, ast.Attribute) and ctx.kind(func.value) in TENSOR_KINDS):
            return False  # a method of something not known to be a tensor
        if (name is not None and name.startswith("torch.distributed")) or any(k.arg == "out" for k in node.keywords):
            return False  # a collective talks to other processes; `out=` writes into a tensor
    return True


def _effect_call(ctx: FixContext, call: ast.Call, local: set[str]) -> EffectCall | None:
    func = call.func
    callee = ctx.code(func)
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    rooted_in_local = isinstance(root, ast.Name) and root.id in local
    name = None if rooted_in_local else ctx.qualname(func)
    what = EFFECT_FUNCTIONS.get(name or "")
    if what is None and isinstance(func, ast.Attribute) and func.attr in LOGGER_METHODS and ctx.kind(func.value) is Kind.LOGGER:
        if rooted_in_local or not isinstance(func.value, ast.Name):
            raise DeclineError("local-logger", f"`{ctx.code(func.value)}` is not a module-level logger, so the op cannot reach it")
        what = "log"
    if what is None and isinstance(func, ast.Attribute) and _records_metrics(ctx, func, local):
        what = "metric"
    if what is None:
        if isinstance(func, ast.Attribute) and func.attr == "exception" and ctx.kind(func.value) is Kind.LOGGER:
            raise DeclineError("log-caller-info", "`logger.exception` logs the exception being handled, which the op cannot see")
        from .check_functions import reporting_function  # it decides with effect_of's tables: imported late

        return EffectCall("report", callee) if reporting_function(ctx, call, local) is not None else None
    if what == "log" and any(k.arg in CALLER_KEYWORDS for k in call.keywords):
        raise DeclineError("log-caller-info", "the record would name the op as its caller (exc_info, stack_info or stacklevel)")
    if what == "warning" and _stacklevel(call) != 1:
        raise DeclineError("warn-stacklevel", "`warnings.warn(stacklevel=...)` attributes the warning to a caller, which the op cannot see")
    return EffectCall(what, callee)


def _records_metrics(ctx: FixContext, method: ast.Attribute, local: set[str]) -> bool:
    """`get_event_storage().put_scalar`, `storage.put_scalar` with `storage` assigned once in the
    function from `get_event_storage()`, or `writer.add_scalar` with a module-level `writer =
    SummaryWriter(...)`: a method that adds one record to an object that only records."""
    receiver = method.value
    if isinstance(receiver, ast.Name):
        made = _made_by(ctx, receiver.id, local, method)
        receiver = made if made is not None else receiver
    return isinstance(receiver, ast.Call) and method.attr in METRIC_RECORDERS.get(_factory(ctx, receiver), frozenset())


def makes_metric_recorder(ctx: FixContext, value: ast.expr) -> bool:
    """`get_event_storage()`, `SummaryWriter(...)`: a call that gives an object that only records."""
    return isinstance(value, ast.Call) and _factory(ctx, value) in METRIC_RECORDERS


def _factory(ctx: FixContext, call: ast.Call) -> str:
    return (ctx.qualname(call.func) or ctx.code(call.func)).rsplit(".", 1)[-1]


def _made_by(ctx: FixContext, name: str, local: set[str], use: ast.AST) -> ast.expr | None:
    """The value of the only binding of `name`, when it is a plain `name = <value>`: in the
    function holding `use` when the name is local to it, else among the module's statements."""
    if name in local:
        function = ctx.function_of(use)
        if function is None:
            return None
        statements: list[ast.AST] = list(own_nodes(function))
    else:
        statements = list(ctx.tree.body)
    stores = [n for s in statements for n in ([s] if name in local else walk(s)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name]
    assignments = [
        s for s in statements if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name
    ]
    if len(stores) != 1 or len(assignments) != 1:
        return None
    return assignments[0].value


def _stacklevel(call: ast.Call) -> int | None:
    """The stacklevel of a warnings.warn call: 1 by default, None when not a literal."""
    value: ast.expr | None = call.args[2] if len(call.args) > 2 else None
    for keyword in call.keywords:
        if keyword.arg == "stacklevel":
            value = keyword.value
        elif keyword.arg is None:
            return None
    if value is None:
        return 1
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, int) else None
