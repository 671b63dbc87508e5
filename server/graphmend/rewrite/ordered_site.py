"""Move a block that only reports or checks into a module-level function called with its values.

The block (a `print`, a log call, `warnings.warn`, `raise`, `assert`, or an `if` made only of
those) becomes the body of a new function; the call that replaces it passes every local value the
block reads. The new function runs as a custom op (ordered_helper.py), whose schema types each
argument, so each value is passed as one of:

- a tensor, evaluated in the graph where the block stood (`Tensor | None`);
- a Python value whose type is certain (py_types.py): `int`, `float`, `bool`, `str`, dtype, device;
- text: a value that is only formatted (a `print` argument, a `%s` log argument, an f-string
  field) is passed already formatted, `f"{value}"`, and the field in the body prints that text.

Only what the original evaluated whenever the block ran is evaluated at the call site; values
the block reads conditionally (inside its `if`, after a short-circuit) are passed as plain
references, and the work on them stays inside the body, where it runs exactly when it did.
The body runs the original code on these values: same text, same count, same exceptions.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from ..analysis.guards import TRUE_WHEN_FIXED_NAMES
from ..analysis.kinds import TENSOR_KINDS, Kind
from ..astwalk import child_nodes, walk
from ..quoting import excerpt
from .context import FixContext
from .cst_function import NodeSwap
from .effects import EFFECT_FUNCTIONS, METRIC_RECORDERS
from .flow import is_in_place_call
from .model import DeclineError
from .purity import is_pure
from .py_types import STR, TEXT, VALUE, Function, PyType, own_nodes, stored_names, value_type
from .selections import reference_root

TENSOR = PyType("Tensor", optional=True)
MAX_TEXT_PARAMS = 2
# Findings on a tensor whose truth is taken (`if t`, `t and u`): evaluating `t` does not break,
# testing it does, and the test stays in the op's body.
TRUTH_TESTS = frozenset({"GM101", "GM102", "GM103", "GM104", "GM107"})
# Calls the body may keep making on the passed values: builtins and formatting that only read.
READING_BUILTINS = frozenset(
    {"str", "repr", "format", "len", "int", "float", "bool", "round", "abs", "min", "max", "sum", "type", "isinstance", "tuple", "list", "sorted", "any", "all", "hasattr", "getattr"}
)
_FORMAT_CONVERSION = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])")


def _settled_while_tracing(expr: ast.expr) -> bool:
    """`(fixed if _graphmend_check(...) else original)`, a fix's own test on types or shapes
    (compile_checks.py): dynamo settles which arm runs while tracing, so where the check holds the
    expression is the fixed arm's tensor and is evaluated in the graph like any other; where it
    does not (eagerly, a value of another type), the original arm runs at the same place as before
    (`x in t` raising for a value it cannot compare)."""
    return (
        isinstance(expr, ast.IfExp)
        and isinstance(expr.test, ast.Call)
        and isinstance(expr.test.func, ast.Name)
        and expr.test.func.id in TRUE_WHEN_FIXED_NAMES
    )


@dataclass
class Param:
    name: str
    type: PyType
    argument: str  # the source text evaluated at the call site


@dataclass
class Site:
    params: list[Param] = field(default_factory=list)
    body: str = ""  # the moved statements, at column 0, "\n"-terminated


def local_names(ctx: FixContext, function: Function) -> set[str]:
    """Names bound in the function (and in functions enclosing it): values a module-level
    function cannot see and must be passed. Computed once per function and context."""
    return set(ctx.remember(("local_names", id(function)), lambda: frozenset(_local_names(ctx, function))))


def _local_names(ctx: FixContext, function: Function) -> set[str]:
    names: set[str] = set()
    for scope in [function, *(a for a in ctx.ancestors(function) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        args = scope.args
        names |= {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        globals_ = {n for node in own_nodes(scope) if isinstance(node, ast.Global) for n in node.names}
        for node in own_nodes(scope):
            if isinstance(node, (ast.stmt, ast.ExceptHandler)):
                names |= stored_names(node) - globals_
            elif isinstance(node, ast.NamedExpr):
                names |= stored_names(node.target)
    return names


class _Lifter:
    """Decides, for every expression of the block, what is passed and what stays in the body."""

    def __init__(self, ctx: FixContext, function: Function, block: ast.stmt, local: set[str], calls_as_values: bool = False) -> None:
        self.ctx = ctx
        self.calls_as_values = calls_as_values  # a call of a check function: its arguments are values
        self.function = function
        self.local = local
        self.params: list[Param] = []
        self.by_argument: dict[str, Param] = {}
        self.replace: dict[int, str] = {}  # id(ast expr) -> param name
        self.replace_field: dict[int, str] = {}  # id(ast expr of an f-string field) -> param (whole field)
        self.taken = {n.id for n in walk(block) if isinstance(n, ast.Name)} | set(ctx.index.top_level_names)
        # Names read by the tests that decide whether the expression at hand runs at all (an `if`,
        # the operands before it in `a and b`, a ternary's test): `labels.max()` after
        # `labels is not None and` raises on None when evaluated unconditionally.
        self.guard_names: list[set[str]] = []
        # While trying to keep an expression in the body with a fallback at hand (evaluate it in
        # the graph, or pass its text), a value of unknown type is not passed as itself: the
        # fallback is what the site did before such values could be passed, and it passes less.
        self.speculating = 0
        # `ast.dump`s of what the block's tests evaluate on every call: read again at the call
        # site, such a value cannot raise where the original did not (it already read it)
        # (mapped to the names each reads: an arm that rebinds one before raising drops it)
        self.evaluated: dict[str, frozenset[str]] = {}
        self.numbers: set[str] = set()  # Python numbers a test of the block ordered against a tensor

    @contextlib.contextmanager
    def guarded_by(self, *guards: ast.expr) -> Iterator[None]:
        """Python-level tests only (`x is not None`, `isinstance`, a flag): a tensor test cannot
        keep an expression from raising on a Python value, and what raises on tensor data is not
        speculable anyway (purity.py)."""
        python_level = [g for g in guards if self.ctx.kind(g) not in TENSOR_KINDS]
        self.guard_names.append({n.id for g in python_level for n in walk(g) if isinstance(n, ast.Name)})
        try:
            yield
        finally:
            self.guard_names.pop()

    @contextlib.contextmanager
    def speculation(self) -> Iterator[None]:
        self.speculating += 1
        try:
            yield
        finally:
            self.speculating -= 1

    def test(self, expr: ast.expr, conditional: bool) -> None:
        """The test of an `if` or `assert` of the block; when it runs on every call, what it
        always evaluates is recorded as safe to read again (`self.num_classes - 1` in MONAI's
        `if torch.max(y) != self.num_classes - 1: raise ValueError(f"... {self.num_classes-1}")`)."""
        if not conditional:
            for part in always_evaluated(expr):
                self.evaluated[ast.dump(part)] = frozenset(n.id for n in walk(part) if isinstance(n, ast.Name))
                self.numbers |= self._ordered_against_tensor(part)
        self.expr(expr, conditional)

    def _ordered_against_tensor(self, part: ast.expr) -> set[str]:
        """Names of non-tensors that `part` orders against a tensor (`torch.max(i) >= length`):
        evaluated on every call without raising, each is a number (a tensor refuses a str or None
        there), so `length - 1` in the message cannot raise either."""
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))):
            return set()
        left, right = part.left, part.comparators[0]
        found = set()
        for name, other in ((left, right), (right, left)):
            if isinstance(name, ast.Name) and self.ctx.kind(name) is Kind.PY and self.ctx.kind(other) in TENSOR_KINDS:
                found.add(name.id)
        return found

    def reads_safely(self, expr: ast.expr) -> bool:
        """Whether evaluating `expr` at the op's call site cannot raise: a name, a constant, an
        attribute chain on the method's `self`, or what a test of the block evaluated anyway. A
        conditional part (an assert's message, built only when the check fails) is passed in
        evaluated on every call: `xs[0]`, `d["lr"]`, `total / count` or `cfg.name` there would
        raise where the original passed."""
        if isinstance(expr, (ast.Name, ast.Constant)) or ast.dump(expr) in self.evaluated:
            return True
        if _number_arithmetic(expr, self.numbers):  # `length - 1`, `length * 2` of a number the test ordered
            return True
        tensor = _tensor_of_metadata(expr)
        if tensor is not None and self.ctx.kind(tensor) in TENSOR_KINDS:
            # `target.dtype`, `x.shape[0]`, `pred.size(1)`: read while tracing; a dimension is
            # taken to exist, as the message that reads it does (transformers' placeholder checks)
            return self.reads_safely(tensor)
        root: ast.expr = expr
        while isinstance(root, ast.Attribute):
            root = root.value
        positional = self.function.args.posonlyargs + self.function.args.args
        owner = self.ctx.index.owner.get(id(self.function))
        return (
            isinstance(root, ast.Name)
            and root is not expr
            and owner is not None
            and bool(positional)
            and root.id == positional[0].arg
            and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in self.function.decorator_list)
        )

    def require_safe_read(self, expr: ast.expr) -> None:
        if not self.reads_safely(expr):
            raise DeclineError(
                "conditional-read",
                f"`{self.ctx.excerpt(expr, 40)}` is read only when the check fails; passed into the op it would be read on every call, where it may raise",
            )

    def reads_a_guarded_name(self, expr: ast.expr) -> bool:
        guarded = set().union(*self.guard_names) if self.guard_names else set()
        return any(isinstance(n, ast.Name) and n.id in guarded for n in walk(expr))

    # -- statements -----------------------------------------------------------------------------
    def statement(self, stmt: ast.stmt, conditional: bool) -> None:
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.If):
            self.test(stmt.test, conditional)
            with self.guarded_by(stmt.test):
                for arm in (stmt.body, stmt.orelse):
                    outside = set(self.local)
                    for inner in arm:
                        self.statement(inner, True)
                    self.local = outside  # names an arm binds are its own (effects._raising_prelude)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            # a name computed for the message of an arm that then raises: computed in the body,
            # where it ran before, and read there from then on
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            assert isinstance(target, ast.Name) and stmt.value is not None  # effects._raising_prelude
            self.expr(stmt.value, conditional)
            self.local.discard(target.id)
            self.evaluated = {dump: names for dump, names in self.evaluated.items() if target.id not in names}
            self.numbers.discard(target.id)
        elif isinstance(stmt, ast.AugAssign):
            # `warn_string += f"..."` of a name the moved code bound first (effects._quiet_binding)
            if not isinstance(stmt.target, ast.Name) or stmt.target.id in self.local:
                raise DeclineError("not-effect-only", f"`{self.ctx.excerpt(stmt, 40)}` updates a value from before the moved code")
            self.expr(stmt.value, conditional)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and (self.calls_as_values or self.calls_reporting_function(stmt.value)):
            self.value_call(stmt.value, conditional)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self.effect_call(stmt.value, conditional)
        elif isinstance(stmt, ast.Raise):
            if stmt.cause is not None and self.uses_local(stmt.cause):
                raise DeclineError("raise-from-local", "`raise ... from` names a local exception the op cannot see")
            self.value_call(stmt.exc, conditional)  # type: ignore[arg-type]
        elif isinstance(stmt, ast.Assert):
            self.test(stmt.test, conditional)
            if stmt.msg is not None:
                with self.guarded_by(stmt.test):
                    self.expr(stmt.msg, True, text=True)  # only evaluated when the assert fails

    def calls_reporting_function(self, call: ast.Call) -> bool:
        """`rank_zero_warn(msg)`: a function of the file that only reports (effects.py said so);
        what it is passed are values it may use as it likes, not text to format."""
        return isinstance(call.func, ast.Name) and call.func.id in self.ctx.index.functions and call.func.id not in self.local

    def effect_call(self, call: ast.Call, conditional: bool) -> None:
        """print / log / warn: which arguments are only formatted (passed as text)."""
        self.callee(call.func, conditional)
        name = self.ctx.qualname(call.func)
        what = EFFECT_FUNCTIONS.get(name or "", "metric" if self.records_metrics(call) else "log")
        text_positions: set[int] = set()
        if what == "metric":
            pass  # recorded values, not text: each is passed as itself
        elif what == "print":
            text_positions = set(range(len(call.args)))
        elif what == "log":
            first = 1 if name == "logging.log" else 0  # logging.log(level, msg, *args)
            text_positions = {first} | self.percent_text_args(call, first)
        elif what == "warning" and call.args and value_type(self.ctx, call.args[0], self.function) == STR:
            text_positions = {0}
        for position, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                raise DeclineError("starred-argument", "`*args` in the call: the op needs each argument on its own")
            self.expr(argument, conditional, text=position in text_positions)
        for keyword in call.keywords:
            if keyword.arg is None:
                raise DeclineError("starred-argument", "`**kwargs` in the call: the op needs each argument on its own")
            self.expr(keyword.value, conditional)

    @staticmethod
    def records_metrics(call: ast.Call) -> bool:
        """A metric recorder's method (effects.py decided the call is an effect; the names of
        those methods and of logger methods do not overlap)."""
        return isinstance(call.func, ast.Attribute) and any(call.func.attr in methods for methods in METRIC_RECORDERS.values())

    def percent_text_args(self, call: ast.Call, first: int) -> set[int]:
        """Arguments a literal `%` format string formats with %s (the others need their values)."""
        if len(call.args) <= first or not isinstance(call.args[first], ast.Constant):
            return set()
        message = call.args[first].value  # type: ignore[attr-defined]
        if not isinstance(message, str):
            return set()
        conversions = [c for c in _FORMAT_CONVERSION.findall(message) if c != "%"]
        return {first + 1 + i for i, c in enumerate(conversions) if c == "s"}

    def value_call(self, expr: ast.expr, conditional: bool) -> None:
        """`E(args)` of a raise: the exception's arguments are values (kept in `exc.args`)."""
        self.expr(expr, conditional)

    # -- expressions ----------------------------------------------------------------------------
    def snapshot(self) -> tuple[list[Param], dict[str, Param], dict[int, str], dict[int, str], set[str]]:
        return list(self.params), dict(self.by_argument), dict(self.replace), dict(self.replace_field), set(self.taken)

    def restore(self, saved: tuple[list[Param], dict[str, Param], dict[int, str], dict[int, str], set[str]]) -> None:
        self.params, self.by_argument, self.replace, self.replace_field, self.taken = saved

    def speculable(self, expr: ast.expr) -> bool:
        return is_pure(self.ctx, expr)

    def breaks_inside(self, expr: ast.expr) -> bool:
        """Whether dynamo breaks inside `expr` (a finding lies within it): evaluated at the call
        site it would break there instead; left in the body it runs inside the op."""
        span = self.ctx.span(expr)
        return any(span.contains(f.span) and not (f.span == span and f.code in TRUTH_TESTS) for f in self.ctx.result.findings)

    def uses_local(self, expr: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in self.local for n in walk(expr))

    def expr(self, expr: ast.expr, conditional: bool, text: bool = False) -> None:
        numpy_call = self.ctx.numpy_call_in(expr)
        if numpy_call is not None:
            # Traced by dynamo as a tensor op, eagerly an ndarray or NumPy number: the op would
            # see a tensor only under compile and print or log its text differently there.
            raise DeclineError("numpy-value", f"`{self.ctx.excerpt(numpy_call, 40)}` is a NumPy value, a tensor only while dynamo traces it")
        if not self.uses_local(expr):
            return
        if isinstance(expr, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            raise DeclineError("unsupported-expression", f"`{self.ctx.excerpt(expr, 40)}` cannot be moved into the op")
        changing = next((n for n in walk(expr) if is_in_place_call(n)), None)
        if changing is not None:
            # `other = loss.mul_(2).item()` after `value = loss.item()`: the op's arguments are all
            # evaluated before its body runs, so the change would come before the earlier read
            raise DeclineError("in-place-call", f"`{self.ctx.excerpt(changing, 40)}` changes a tensor in place: the op's arguments would run it before the body's earlier reads")
        kind = self.ctx.kind(expr)
        liftable = (not isinstance(expr, (ast.BoolOp, ast.IfExp)) or _settled_while_tracing(expr)) and not self.breaks_inside(expr)
        if kind in TENSOR_KINDS and liftable and (not conditional or (_is_reference(expr) and self.reads_safely(expr))):
            self.lift(expr, TENSOR)  # evaluated in the graph, where it stood
            return
        if kind in TENSOR_KINDS and liftable and self.speculable(expr):
            # Read conditionally: keep the work in the body (it runs only when the original ran
            # it), unless that needs a value the op cannot take; then evaluate it in the graph
            # on every call (it is pure and cannot raise on data, so that is unobservable) -
            # unless the test guarding it reads the same names: it may be what keeps it from
            # raising (`x is not None and x.max() > 0`), so the fix declines instead.
            saved = self.snapshot()
            try:
                with self.speculation():
                    self.children(expr, conditional)
            except DeclineError:
                if self.reads_a_guarded_name(expr):
                    raise DeclineError(
                        "guarded-value",
                        f"`{self.ctx.excerpt(expr, 40)}` runs only after a test on its names, which may keep it from raising; "
                        "evaluated on every call it could raise, and the op cannot take it otherwise",
                    ) from None
                self.restore(saved)
                self.lift(expr, TENSOR)
            return
        if isinstance(expr, ast.Attribute) and expr.attr == "shape" and self.ctx.kind(expr.value) in TENSOR_KINDS and not text:
            # a torch.Size, which the op cannot take (its call would fall back to the original,
            # traced, and break there): pass the tensor and read its shape in the body
            self.expr(expr.value, conditional)
            return
        if _is_reference(expr):
            if conditional:
                self.require_safe_read(expr)
            known = value_type(self.ctx, expr, self.function)
            if known is not None:
                self.lift(expr, known)
            elif text:
                self.lift_text(expr)
            elif self.ctx.kind(expr) in (Kind.PY_SEQ, Kind.TENSORS):
                raise DeclineError(
                    "sequence-value",
                    f"cannot pass `{self.ctx.excerpt(expr, 40)}` into the op: a list or tuple, which it cannot take "
                    "(the call would fall back to the original code, and break)",
                )
            elif not self.speculating and sum(1 for p in self.params if p.type in (TEXT, VALUE)) < MAX_TEXT_PARAMS:
                self.lift(expr, VALUE)  # `%d`, arithmetic: the tensor or number itself (else the original call)
            else:
                raise DeclineError("unknown-type", f"cannot pass `{self.ctx.excerpt(expr, 40)}` into the op: its type is not known")
            return
        if isinstance(expr, ast.JoinedStr):
            self.fstring(expr, conditional)
            return
        if not conditional and liftable and value_type(self.ctx, expr, self.function) is not None and self.pure_reads(expr):
            self.lift(expr, value_type(self.ctx, expr, self.function))  # type: ignore[arg-type]
            return
        if text and not conditional and liftable and self.pure_reads(expr):
            # only formatted (`print(type(x))`): keep it in the body when its values can be
            # passed, else pass its text, formatted in the graph where the original formatted it
            saved = self.snapshot()
            try:
                with self.speculation():
                    self.children(expr, conditional)
            except DeclineError:
                self.restore(saved)
                self.lift(expr, STR, f"str({self.ctx.argument(expr)})")
            return
        self.children(expr, conditional)

    def children(self, expr: ast.expr, conditional: bool) -> None:
        """Keep `expr` in the body and decide for the values it reads."""
        if isinstance(expr, ast.Call):
            self.callee(expr.func, conditional)
            for argument in [*expr.args, *(k.value for k in expr.keywords)]:
                self.expr(argument.value if isinstance(argument, ast.Starred) else argument, conditional)
            return
        if isinstance(expr, ast.BoolOp):
            self.expr(expr.values[0], conditional)
            for position, value in enumerate(expr.values[1:], start=1):
                with self.guarded_by(*expr.values[:position]):
                    self.expr(value, True)
            return
        if isinstance(expr, ast.IfExp):
            self.expr(expr.test, conditional)
            with self.guarded_by(expr.test):
                self.expr(expr.body, True)
                self.expr(expr.orelse, True)
            return
        for child in child_nodes(expr):
            if isinstance(child, ast.expr):
                self.expr(child, conditional)

    def fstring(self, expr: ast.JoinedStr, conditional: bool) -> None:
        fields = [p for p in expr.values if isinstance(p, ast.FormattedValue) and self.uses_local(p.value)]
        known = all(value_type(self.ctx, p.value, self.function) is not None for p in fields)
        if not conditional and known and self.pure_reads(expr) and not self.breaks_inside(expr):
            self.lift(expr, STR)  # the whole text, formatted in the graph as before
            return
        for part in fields:
            value = part.value
            plain = part.conversion == -1 and part.format_spec is None
            if self.ctx.kind(value) in TENSOR_KINDS or (part.format_spec is not None and conditional and value_type(self.ctx, value, self.function) is None):
                self.expr(value, conditional)  # formatted in the body, on the value passed
            elif plain and _is_reference(value) and value_type(self.ctx, value, self.function) is None:
                if conditional:
                    self.require_safe_read(value)
                self.lift_text(value)  # unknown type: the tensor or number itself, or its text
            elif _is_reference(value) and value_type(self.ctx, value, self.function) is not None:
                # a name of known type is passed as itself and formatted in the body: the same
                # text, and no string built in the graph from a symbolic int (dynamo's f"{n}" of
                # a SymInt is not a str the op accepts)
                self.expr(value, conditional)
            elif self.breaks_inside(value):
                # `{loss.item():.4f}`: formatted at the call site, the read would break there;
                # in the body it reads the tensor passed in, at run time, with the same spec
                self.expr(value, conditional)
            elif (_is_reference(value) or self.pure_reads(value)) and not (conditional and part.format_spec is not None):
                # formatted at the call site, on every call: a spec (`{n - 1:d}` of a float) could
                # raise there where the original, formatting only when the check failed, did not
                if conditional:
                    self.require_safe_read(value)
                field_text = self.field_text(part, expr)
                self.lift_field(value, field_text)
            else:
                self.expr(value, conditional)

    def callee(self, func: ast.expr, conditional: bool) -> None:
        """A call kept in the body must reach what it calls from module level and only read."""
        if isinstance(func, ast.Attribute) and self.uses_local(func.value):
            receiver = func.value  # x.sum(), text.format(...): a method of a value passed in
            if self.ctx.kind(receiver) in TENSOR_KINDS or value_type(self.ctx, receiver, self.function) is not None:
                if func.attr.endswith("_") and not func.attr.startswith("_"):  # the op promises not to mutate
                    raise DeclineError("in-place-call", f"`{self.ctx.code(func)}` would change a tensor in place inside the op")
                self.expr(receiver, conditional)
                return
        if self.uses_local(func):
            raise DeclineError("local-callable", f"calls `{self.ctx.excerpt(func, 40)}`, which a module-level op cannot reach")
        # A module-level callee stays in the body and runs exactly when the original ran it.

    def pure_reads(self, expr: ast.expr) -> bool:
        """No call in `expr` can change anything (evaluating it earlier, in the graph, is unobservable)."""
        for node in walk(expr):
            if isinstance(node, ast.Call):
                name = self.ctx.qualname(node.func)
                if name is not None and name.startswith("builtins.") and name[len("builtins.") :] in READING_BUILTINS:
                    continue
                func = node.func
                if isinstance(func, ast.Attribute) and (self.ctx.kind(func.value) in TENSOR_KINDS or value_type(self.ctx, func.value, self.function) == STR):
                    if not func.attr.endswith("_"):
                        continue
                return False
        return True

    def field_text(self, part: ast.FormattedValue, owner: ast.JoinedStr) -> str:
        """`f"{value!r:>8}"` for one field: evaluated at the call site it gives the field's text."""
        inner = self.ctx.code(part.value)
        conversion = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[part.conversion]
        spec = ""
        if part.format_spec is not None:
            spec_text = "".join(str(v.value) for v in part.format_spec.values if isinstance(v, ast.Constant))  # type: ignore[attr-defined]
            if any(isinstance(v, ast.FormattedValue) for v in part.format_spec.values):  # type: ignore[attr-defined]
                raise DeclineError("unsupported-expression", "a nested format spec in an f-string")
            spec = ":" + spec_text
        quote = "'" if '"' in inner + spec else '"'
        if quote in inner + spec or "\n" in inner:
            raise DeclineError("unsupported-expression", f"the f-string field `{excerpt(inner, 30)}` cannot be re-quoted")
        return f"f{quote}{{{inner}{conversion}{spec}}}{quote}"

    # -- parameters -----------------------------------------------------------------------------
    def lift(self, expr: ast.expr, kind: PyType, argument: str | None = None) -> None:
        argument = argument or self.ctx.argument(expr)
        param = self.param_for(expr, kind, argument)
        if not (isinstance(expr, ast.Name) and param.name == expr.id):
            self.replace[id(expr)] = param.name

    def lift_text(self, expr: ast.expr) -> None:
        """A value of unknown type that is only formatted: passed as it is (a tensor, a number, a
        bool) or as its text; a few per site (each one multiplies the ops registered)."""
        if sum(1 for p in self.params if p.type in (TEXT, VALUE)) < MAX_TEXT_PARAMS:
            self.lift(expr, TEXT)
        else:
            self.lift(expr, STR, f"str({self.ctx.argument(expr)})")

    def lift_field(self, value: ast.expr, field_text: str) -> None:
        param = self.param_for(value, STR, field_text, suffix="_text")
        self.replace_field[id(value)] = param.name

    def param_for(self, expr: ast.expr, kind: PyType, argument: str, suffix: str = "") -> Param:
        key = f"{kind}:{argument}"
        if key in self.by_argument:
            return self.by_argument[key]
        if kind in (TEXT, VALUE):
            # one value both formatted and computed with: one parameter, passed as the value
            # (formatting a number or tensor passed as itself gives the same text)
            other = self.by_argument.get(f"{TEXT if kind == VALUE else VALUE}:{argument}")
            if other is not None:
                other.type = VALUE
                self.by_argument[key] = other
                return other
        if isinstance(expr, ast.Name) and not suffix and argument == expr.id:
            name = expr.id
        else:
            name = self.fresh(_name_from(self.ctx.code(expr)) + suffix)
        param = Param(name, kind, argument)
        self.params.append(param)
        self.by_argument[key] = param
        self.taken.add(name)
        return param

    def fresh(self, base: str) -> str:
        name, number = base, 2
        while name in self.taken or name in self.local:
            name, number = f"{base}_{number}", number + 1
        return name


# Attributes every tensor has, whose read cannot raise.
_TENSOR_METADATA = frozenset({"dtype", "shape", "device", "ndim", "layout", "is_cuda", "is_sparse", "requires_grad"})


def _tensor_of_metadata(expr: ast.expr) -> ast.expr | None:
    """The value whose metadata `expr` reads (`t.dtype`, `t.dtype.itemsize`, `t.shape[0]`,
    `t.size(1)`, with constant dimensions), or None."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and type(expr.slice.value) is int:
        expr = expr.value
        if not (isinstance(expr, ast.Attribute) and expr.attr == "shape"):
            return None
    elif isinstance(expr, ast.Call):
        constant_dims = not expr.keywords and all(isinstance(a, ast.Constant) and type(a.value) is int for a in expr.args)
        return expr.func.value if constant_dims and isinstance(expr.func, ast.Attribute) and expr.func.attr == "size" else None
    while isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Attribute):
        expr = expr.value  # down to the attribute read off the value itself
    return expr.value if isinstance(expr, ast.Attribute) and expr.attr in _TENSOR_METADATA else None


def _is_reference(expr: ast.expr) -> bool:
    """A local name or an attribute chain on one (`x`, `self.config.eps`): reading it has no effect."""
    return reference_root(expr) is not None


def _name_from(code: str) -> str:
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code) if w not in ("self", "torch", "str", "f")]
    name = "_".join(w.strip("_") for w in words[:3] if w.strip("_")).lower()
    return name if name.isidentifier() and name else "value"


def build_site(
    ctx: FixContext,
    function: Function,
    block: ast.stmt,
    peel: int = 0,
    prelude: list[ast.Assign] | None = None,
    calls_as_values: bool = False,
    head: int = 0,
    following: list[ast.stmt] | None = None,
) -> Site:
    """The parameters and body of the function that replaces `block`. With `peel`, `block` is an
    `if A and ... and T: ...` whose first `peel` conditions are plain Python: they stay in the
    graph around the call, and the body tests only the rest. `prelude`: assignments just before
    `block` of names only it reads (`scale = t.max().item()` before `if scale > 1e4: log(scale)`),
    moved with it, so the number is computed inside the op where the original computed it.
    `calls_as_values`: `block` calls a check function (check_functions.py), whose arguments are
    values it tests, not text it formats. `head`: `block` is an `if` of which only the test and the
    first `head` statements of the body move (the rest stays under a copy of the test).
    `following`: reports right after `block` that read what the prelude computes; they move too."""
    prelude = prelude or []
    following = following or []
    prelude_names = {t.id for a in prelude for t in a.targets if isinstance(t, ast.Name)}
    local = local_names(ctx, function) - prelude_names
    for statement in [*prelude, block, *following]:
        _check_movable(ctx, statement, function)
    lifter = _Lifter(ctx, function, block, local, calls_as_values)
    lifter.taken |= prelude_names | {n.id for s in following for n in walk(s) if isinstance(n, ast.Name)}
    for assignment in prelude:
        lifter.expr(assignment.value, conditional=False)
    if head:
        assert isinstance(block, ast.If)
        lifter.test(block.test, conditional=False)
        with lifter.guarded_by(block.test):
            for statement in block.body[:head]:
                lifter.statement(statement, conditional=True)
    elif peel:
        assert isinstance(block, ast.If) and isinstance(block.test, ast.BoolOp)
        rest = block.test.values[peel:]
        lifter.test(rest[0], conditional=False)
        for value in rest[1:]:
            lifter.expr(value, conditional=True)
        for statement in block.body:
            lifter.statement(statement, conditional=True)
    else:
        lifter.statement(block, conditional=False)
    for statement in following:
        lifter.statement(statement, conditional=False)
    if ctx.decide_only:
        return Site(lifter.params, "")  # every precondition is checked by now: the text is not needed
    body = "".join(_render(ctx, function, assignment, lifter, 0) for assignment in prelude)
    body += _render(ctx, function, block, lifter, peel, head)
    return Site(lifter.params, body + "".join(_render(ctx, function, statement, lifter, 0) for statement in following))


def _number_arithmetic(expr: ast.expr, numbers: set[str]) -> bool:
    """`n + c`, `n - c`, `n * c` (either order) of a name known to hold a Python number and a numeric
    constant: Python arithmetic that cannot raise (no division: `n / 0`)."""
    if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult))):
        return False
    for name, constant in ((expr.left, expr.right), (expr.right, expr.left)):
        if (
            isinstance(name, ast.Name)
            and name.id in numbers
            and isinstance(constant, ast.Constant)
            and isinstance(constant.value, (int, float))
            and not isinstance(constant.value, bool)
        ):
            return True
    return False


def always_evaluated(expr: ast.expr) -> Iterator[ast.expr]:
    """`expr` and the parts of it Python evaluates whenever it evaluates `expr`: not the operands
    after the first of `and`/`or` or of a chained comparison, a ternary's arms, or what a lambda
    or comprehension holds."""
    yield expr
    if isinstance(expr, ast.BoolOp):
        yield from always_evaluated(expr.values[0])
    elif isinstance(expr, ast.IfExp):
        yield from always_evaluated(expr.test)
    elif isinstance(expr, ast.Compare):
        yield from always_evaluated(expr.left)
        yield from always_evaluated(expr.comparators[0])
    elif not isinstance(expr, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for child in child_nodes(expr):
            if isinstance(child, ast.expr):
                yield from always_evaluated(child)


def conjuncts(node: cst.BaseExpression, top: bool = True) -> list[cst.BaseExpression]:
    """The operands of an `a and b and c` chain, as `ast` lists them (libcst nests the chain to the
    left; parentheses around the whole test do not count, those around an operand do)."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) and (top or not node.lpar):
        return [*conjuncts(node.left, False), node.right]
    return [node]


def split_test(test: cst.BaseExpression, count: int, peel: int) -> tuple[cst.BaseExpression, cst.BaseExpression]:
    """The first `peel` of `count` conditions of an `and` chain, and the rest, each joined again."""
    parts = conjuncts(test)
    if len(parts) != count:
        raise DeclineError("no-cst-match", "could not split the condition as Python does (unusual formatting)")
    return join_conjuncts(parts[:peel]), join_conjuncts(parts[peel:])


def join_conjuncts(parts: list[cst.BaseExpression]) -> cst.BaseExpression:
    joined = parts[0]
    for part in parts[1:]:
        joined = cst.BooleanOperation(left=joined, operator=cst.And(), right=part)
    return joined


def _check_movable(ctx: FixContext, moved: ast.stmt, function: Function) -> None:
    in_class = any(isinstance(a, ast.ClassDef) for a in ctx.ancestors(function))
    for node in walk(moved):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args:
            raise DeclineError("zero-arg-super", "`super()` without arguments only works inside the class")
        names = [node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(node, ast.Attribute) else []
        if in_class and any(n.startswith("__") and not n.endswith("__") for n in names):
            raise DeclineError("mangled-name", "a `__name` inside a class is renamed by Python; outside the class it would mean something else")


_MOVABLE: dict[type[ast.AST], type[cst.CSTNode]] = {ast.If: cst.If, ast.Expr: cst.Expr, ast.Raise: cst.Raise, ast.Assert: cst.Assert, ast.Assign: cst.Assign}


def movable_kind(stmt: ast.stmt) -> type[cst.CSTNode]:
    """The libcst type of a statement the fix can move (declines for any other statement)."""
    kind = _MOVABLE.get(type(stmt))
    if kind is None:
        raise DeclineError("not-effect-only", "only prints, logs, warnings, raises and asserts can be moved")
    return kind


def statement_node(ctx: FixContext, function: Function, stmt: ast.stmt) -> cst.CSTNode:
    """The libcst node of a statement the fix moves: the `if`, or the small statement itself."""
    return ctx.cst_node(function, stmt, movable_kind(stmt))


def _render(ctx: FixContext, function: Function, moved: ast.stmt, lifter: _Lifter, peel: int, head: int = 0) -> str:
    """The moved statement's source with lifted expressions replaced by parameter names."""
    node = statement_node(ctx, function, moved)
    replacements: dict[cst.CSTNode, cst.CSTNode] = {}
    fields: dict[int, str] = {}
    for ast_node in walk(moved):
        name = lifter.replace.get(id(ast_node))
        if name is not None:
            replacements[ctx.cst_node(function, ast_node, cst.BaseExpression)] = cst.Name(name)  # type: ignore[type-abstract]
        field_name = lifter.replace_field.get(id(ast_node))
        if field_name is not None:
            fields[id(ctx.cst_node(function, ast_node, cst.BaseExpression))] = field_name  # type: ignore[type-abstract]
    for fse in _formatted_fields(node):
        name = fields.get(id(fse.expression))
        if name is not None:
            replacements[fse] = cst.FormattedStringExpression(expression=cst.Name(name))
    new_node = node.visit(NodeSwap(replacements))
    if isinstance(new_node, cst.If):
        new_node = new_node.with_changes(leading_lines=())
        if head:
            new_node = new_node.with_changes(body=new_node.body.with_changes(body=new_node.body.body[:head]))
        if peel:
            count = len(moved.test.values)  # type: ignore[attr-defined]
            new_node = new_node.with_changes(test=split_test(new_node.test, count, peel)[1])
    assert isinstance(new_node, cst.CSTNode)  # NodeSwap replaces expressions only, never removes
    text = ctx.render(function, new_node)
    return text if text.endswith("\n") else text + "\n"


def _formatted_fields(node: cst.CSTNode) -> list[cst.FormattedStringExpression]:
    found: list[cst.FormattedStringExpression] = []

    class _Collect(cst.CSTVisitor):
        def visit_FormattedStringExpression(self, fse: cst.FormattedStringExpression) -> None:
            found.append(fse)

    node.visit(_Collect())
    return found

