"""GM524: bind the result of a helper that breaks to a name before the tensor method call that
takes it, so that dynamo resumes after the helper's break without the bound method on its stack.

`xs_pad.masked_fill(make_pad_mask(ilens, xs_pad, 1), 0.0)` (ESPnet) breaks twice: inside the
helper, and again at the method call, since the resumed code holds `xs_pad.masked_fill` and
cannot call a C method it has no source for (measured on torch 2.13). Written as

    _graphmend_arg = make_pad_mask(ilens, xs_pad, 1)
    xs_pad = xs_pad.masked_fill(_graphmend_arg, 0.0)

the second break is gone and every value is the same: only the order of the receiver's lookup
and the helper's call changes, and the receiver is a local name (the helper cannot rebind it)
looked up for a method with no side effects, so nothing the helper does reads differently. The
arguments before the helper's must be names or constants (evaluated before it in both).
"""

from __future__ import annotations

import ast

import libcst as cst

from ...astwalk import walk
from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from .generated import fresh_name

TITLE = "Bind `{helper}(...)` to a name before calling `{method}`, so dynamo resumes after the helper's break without breaking again"


class HoistHelperArgumentFixer:
    codes = frozenset({"GM524"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            raise DeclineError("no-node", "could not find the method call in the source")
        function = ctx.function_of(call)
        statement = ctx.statement_of(call)
        if function is None or statement is None:
            raise DeclineError("not-in-function", "the call is not inside a function")
        if not (isinstance(statement, (ast.Assign, ast.Return, ast.Expr, ast.AnnAssign)) and statement.value is call):
            raise DeclineError("hoist-not-whole-value", "the method call is not the whole value of its statement (something else would run before the helper)")
        receiver = call.func.value
        if not (isinstance(receiver, ast.Name) and _local(function, receiver.id)):
            raise DeclineError("hoist-receiver", f"the method is called on `{ctx.excerpt(receiver)}`, not on a local name (the helper could change what it reads)")
        helper = _helper_argument(call)
        if helper is None or f"`{ctx.code(helper.func)}(...)`" not in finding.message:
            raise DeclineError("hoist-helper", "the helper's call is not an argument with only names and constants before it")
        name = fresh_name(function, "_graphmend_arg")
        line = ctx.cst_node(function, statement, cst.SimpleStatementLine)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            raise DeclineError("several-statements", "the line holds more than one statement")
        helper_node = ctx.cst_node(function, helper, cst.Call)
        binding = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(name))], helper_node)], leading_lines=line.leading_lines
        )

        class Replace(cst.CSTTransformer):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                return cst.Name(name) if original is helper_node else updated

        rewritten = line.visit(Replace())
        assert isinstance(rewritten, cst.SimpleStatementLine)
        replacement = cst.FlattenSentinel([binding, rewritten.with_changes(leading_lines=())])
        edit = ctx.rewrite(function, {line: replacement})
        title = TITLE.format(helper=ctx.excerpt(helper.func, 30), method=call.func.attr)
        return Fix(finding, title, Safety.SAFE, (edit,))


def _helper_argument(call: ast.Call) -> ast.Call | None:
    """The one argument that is a call of a plain function or method (`make_pad_mask(...)`,
    `self.mask(...)`), with only names and constants before it."""
    arguments = [*call.args, *(k.value for k in call.keywords)]
    for position, argument in enumerate(arguments):
        if isinstance(argument, ast.Call) and isinstance(argument.func, (ast.Name, ast.Attribute)):
            if all(isinstance(a, (ast.Name, ast.Constant)) for a in arguments[:position]):
                return argument
            return None
        if not isinstance(argument, (ast.Name, ast.Constant)):
            return None
    return None


def _local(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether `name` is a parameter or a name the function assigns (and declares no `global`)."""
    args = function.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in walk(function)):
        return False
    return name in params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in walk(function))
