"""Unsafe fixes: they remove the break by changing something observable, so they are only applied
when asked for (`--unsafe-fixes`, or one quick fix at a time) and their titles say what changes.

- Side effects (print, logging, Logger methods, warnings) guarded by
  `if not torch.compiler.is_compiling():` - they then run in eager mode only (taxonomy P01b).
- `if <tensor test>: raise ...` (validation, or a branch that only warns or logs): the test runs
  only outside torch.compile - invalid inputs are no longer caught in compiled code.
- `torch._dynamo.graph_break()` removed - it may be there on purpose.
- Module-level dynamo config flags: `capture_scalar_outputs` (scalars traced as symbolic numbers,
  P03b/P08/P43/P62), `capture_dynamic_output_shape_ops` (nonzero, masks, unique, P24b) and
  `allow_rnn` (nn.LSTM/GRU/RNN, GM518). They change dynamo's behaviour for the whole process, and
  later Python use of a captured scalar (`if s > 0`) still breaks.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import Kind
from ...analysis.rules import RULES_BY_CODE
from ...analysis.symbols import RNN_FLAG, SCALAR_FLAG, SHAPE_FLAG
from ...findings import Finding
from ..config_flags import flag_edit, module_flag_value
from ..context import FixContext
from ..flag_consumers import breaking_use
from ..model import DeclineError, Fix, Safety


def _call_statement(ctx: FixContext, finding: Finding) -> tuple[ast.Call, ast.Expr, ast.FunctionDef]:
    call = ctx.node_for(finding, (ast.Call,))
    if not isinstance(call, ast.Call):
        raise DeclineError("no-node", "could not find the call in the source")
    statement = ctx.parent(call)
    if not (isinstance(statement, ast.Expr) and statement.value is call):
        raise DeclineError("not-a-statement", "the call's result is used, so it cannot be skipped")
    function = ctx.function_of(call)
    if function is None:
        raise DeclineError("not-in-function", "the call is not inside a function")
    parent = ctx.parent(statement)
    siblings = [s for f in ("body", "orelse", "finalbody") for s in (getattr(parent, f, None) or [])]
    if any(s is not statement and s.lineno == statement.lineno for s in siblings):
        raise DeclineError("shared-line", "the call shares its line with other statements")
    return call, statement, function  # type: ignore[return-value]


class EagerOnlyFixer:
    """print / logging / Logger / warnings -> only outside torch.compile."""

    codes = frozenset({"GM301", "GM305", "GM306", "GM307"})
    safety = Safety.UNSAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call, statement, function = _call_statement(ctx, finding)
        torch = ctx.torch_name()
        guard = f"not {torch}.compiler.is_compiling()"
        what = ctx.code(call.func)
        parent = ctx.parent(statement)
        if isinstance(parent, ast.If) and len(parent.body) == 1 and not parent.orelse and parent.body[0] is statement:
            # `if <tensor test>: print(...)`: guard the test too, so that under compile the `and`
            # short-circuits before the data-dependent test (no break for the `if` either).
            target_if = ctx.cst_node(function, parent, cst.If)
            test = cst.parse_expression(f"{guard} and ({ctx.code(parent.test)})" if isinstance(parent.test, (ast.BoolOp, ast.IfExp, ast.NamedExpr)) else f"{guard} and {ctx.code(parent.test)}")
            edits = [ctx.rewrite(function, {target_if.test: test})]
            title = f"Run `{what}(...)` and the test before it only outside torch.compile (they no longer run in compiled code)"
            return self._fix(ctx, finding, edits, title)
        target = ctx.cst_node(function, statement, cst.SimpleStatementLine)
        if len(target.body) != 1:
            raise DeclineError("shared-line", "the call shares its line with other statements")
        guarded = cst.ensure_type(cst.parse_statement(f"if {guard}:\n    {ctx.code(call)}\n"), cst.If)
        guarded = guarded.with_changes(
            leading_lines=target.leading_lines,
            body=guarded.body.with_changes(body=[target.with_changes(leading_lines=())]),  # keep the original call verbatim
        )
        edits = [ctx.rewrite(function, {target: guarded})]
        return self._fix(ctx, finding, edits, f"Run `{what}(...)` only outside torch.compile (it no longer runs in compiled code)")

    def _fix(self, ctx: FixContext, finding: Finding, edits: list, title: str) -> Fix:
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, title, Safety.UNSAFE, tuple(edits))


class EagerCheckFixer:
    """`if <tensor test>: raise ...` (or only warns, logs, prints) -> the test runs only outside
    torch.compile. Data-dependent input validation is the commonest `if` no where can express."""

    codes = frozenset({"GM101"})
    safety = Safety.UNSAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.expr,))
        statement = next((a for a in ctx.ancestors(node) if isinstance(a, (ast.If, ast.stmt))), None) if node is not None else None
        if not isinstance(statement, ast.If) or not ctx.contains(statement.test, node):
            raise DeclineError("not-an-if", "the tensor condition is not the test of an `if` statement")
        test = statement.test  # all of it is guarded: `P and T` keeps P's short-circuit
        if statement.orelse:
            raise DeclineError("check-has-else", "the `if` has an else or elif branch: skipping the test would change which runs")
        for inner in statement.body:
            if not _diagnostic(ctx, inner):
                raise DeclineError("check-does-more", f"the branch does more than raise, warn, log or print (`{ctx.excerpt(inner, 40)}`)")
        function = ctx.function_of(statement)
        if function is None:
            raise DeclineError("not-in-function", "the check is not inside a function")
        torch = ctx.torch_name()
        guard = f"not {torch}.compiler.is_compiling()"
        text = ctx.code(test)
        wrapped = f"({text})" if isinstance(test, (ast.BoolOp, ast.IfExp, ast.NamedExpr)) else text
        target = ctx.cst_node(function, statement, cst.If)
        edits = [ctx.rewrite(function, {target.test: cst.parse_expression(f"{guard} and {wrapped}")})]
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        title = "Check this only outside torch.compile (compiled code skips the test and what it raises or reports)"
        return Fix(finding, title, Safety.UNSAFE, tuple(edits))


def _diagnostic(ctx: FixContext, statement: ast.stmt) -> bool:
    """`raise`, `pass`, or a call to print / logging / a Logger / warnings whose result is unused."""
    if isinstance(statement, (ast.Raise, ast.Pass)):
        return True
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    name = ctx.qualname(func)
    if name is not None and (name == "builtins.print" or name.startswith(("logging.", "warnings.warn"))):
        return True
    return isinstance(func, ast.Attribute) and ctx.kind(func.value) is Kind.LOGGER


class RemoveGraphBreakFixer:
    codes = frozenset({"GM501"})
    safety = Safety.UNSAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        _call, statement, function = _call_statement(ctx, finding)
        target = ctx.cst_node(function, statement, cst.SimpleStatementLine)
        if len(target.body) != 1:
            raise DeclineError("shared-line", "the call shares its line with other statements")
        parent = ctx.parent(statement)
        block: list[ast.stmt] = next((getattr(parent, f) for f in ("body", "orelse", "finalbody") if statement in (getattr(parent, f, None) or [])), [])
        replacement: cst.CSTNode | cst.RemovalSentinel = cst.RemovalSentinel.REMOVE
        if len(block) == 1:
            replacement = cst.parse_statement("pass\n").with_changes(leading_lines=target.leading_lines)
        edits = [ctx.rewrite(function, {target: replacement})]
        return Fix(finding, "Remove the explicit graph break (it may be there on purpose)", Safety.UNSAFE, tuple(edits))


_FLAG_FOR = {
    "GM201": SCALAR_FLAG,
    "GM203": SCALAR_FLAG,
    "GM205": SCALAR_FLAG,
    "GM206": SCALAR_FLAG,
    "GM401": SHAPE_FLAG,
    "GM402": SHAPE_FLAG,
    "GM403": SHAPE_FLAG,
    "GM404": SHAPE_FLAG,
    "GM405": SHAPE_FLAG,
    "GM406": SHAPE_FLAG,
    "GM518": RNN_FLAG,
}


# Rules whose findings a flag silences in part (the analysis drops GM203's int()/float()/bool() with
# capture_scalar_outputs set, not its math.*), and whose finding's node is the captured value.
_PARTLY_REMOVED_BY = {"GM203": SCALAR_FLAG}
# The conversions capture_scalar_outputs traces as symbolic numbers (GM203 also covers `math.*`,
# which still breaks with the flag: measured on torch 2.13).
_CAPTURED_CONVERSIONS = frozenset({"builtins.int", "builtins.float", "builtins.bool"})


class ConfigFlagFixer:
    codes = frozenset(_FLAG_FOR)
    safety = Safety.UNSAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        flag = _FLAG_FOR[finding.code]
        if module_flag_value(ctx, flag) is not None:
            raise DeclineError("flag-already-set", f"this module already sets `torch._dynamo.config.{flag}`; graphmend will not override it")
        if finding.code == "GM518" and "LSTM" in _recurrent_classes(ctx, finding):
            raise DeclineError(
                "flag-breaks-inductor",
                "with allow_rnn, inductor on CPU fails to compile an nn.LSTM that needs gradients on torch 2.13 "
                "(`expected Tensor() for op: aten.mkldnn_rnn_layer`): the fix would turn a break into a crash in training",
            )
        if finding.code == "GM203":
            call = ctx.node_for(finding, (ast.Call,))
            if not (isinstance(call, ast.Call) and ctx.qualname(call.func) in _CAPTURED_CONVERSIONS):
                raise DeclineError(
                    "flag-keeps-break",
                    "capture_scalar_outputs traces int(), float() and bool() of a tensor, not a `math` function of one: the break would stay",
                )
        if finding.code == "GM205":
            node = ctx.node_for(finding, (ast.Subscript,))
            parts = node.slice.elts if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) else [getattr(node, "slice", None)]
            if not any(isinstance(p, ast.Slice) for p in parts):
                raise DeclineError(
                    "flag-makes-error",
                    "with capture_scalar_outputs a tensor used as a list or integer index is a compile error instead of a break",
                )
        if flag in (SCALAR_FLAG, SHAPE_FLAG):
            _check_flag_removes_breaks(ctx, flag)
        title = f"Set torch._dynamo.config.{flag} = True in this module (changes dynamo's behaviour for the whole process)"
        return Fix(finding, title, Safety.UNSAFE, (flag_edit(ctx, flag),), full=False)


def _check_flag_removes_breaks(ctx: FixContext, flag: str) -> None:
    """The flag silences every finding of its rules in the module: decline unless each of those
    captured values stays in traced code (see flag_consumers), so that what the fix summary counts
    as gone is gone for dynamo too. The rules the flag silences only in part count as well
    (GM203: `float(t)` is captured, `math.exp(t)` still breaks): a `float(error)` whose value
    reaches a Python test moved the break into the loop around it (k-diffusion's step-size
    controller, a claim dynamo did not confirm)."""
    for other in ctx.result.findings:
        rule = RULES_BY_CODE.get(other.code)
        if rule is None or flag not in (rule.removed_by_flag, _PARTLY_REMOVED_BY.get(other.code)):
            continue
        node = ctx.node_for(other)
        use = breaking_use(ctx, node, flag) if node is not None else None
        if use is not None:
            raise DeclineError(
                "flag-moves-break",
                f"with `{flag}` the value of line {other.span.start_line} is traced, but line {use.line} uses it in a way "
                f"not known to trace (`{use.code}`): the break could move there, or compiling could fail",
            )


def _recurrent_classes(ctx: FixContext, finding: Finding) -> set[str]:
    """`self.rnn(x)` (or a read of `self.rnn`) -> {"LSTM"} when the class (or an in-file base) sets
    `self.rnn = nn.LSTM(...)`, and the layers in-file subclasses set it to (timm's LSTM2d(RNN2dBase))."""
    node = ctx.node_for(finding, (ast.Call, ast.Attribute))
    attribute = node.func if isinstance(node, ast.Call) else node
    function = ctx.function_of(node) if node is not None else None
    owner = ctx.index.owner.get(id(function)) if function is not None else None
    if not (isinstance(attribute, ast.Attribute) and owner is not None):
        return set()
    own = ctx.index.attr_torch_class(owner, attribute.attr)
    return ({own} if own else set()) | {layer for _, layer in ctx.index.subclass_torch_classes(owner, attribute.attr)}
