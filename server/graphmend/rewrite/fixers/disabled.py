"""GM502: a call of a function this file excludes from compilation, where nothing in that function
breaks -> remove the `torch.compiler.disable` decorator.

Dynamo never traces a disabled function: every call from compiled code ends the graph, runs it
eagerly and resumes after it (ComfyUI's `cast_bias_weight`, one break per layer). Such a decorator
often outlived the break it was added for: the body is plain tensor code today. Dynamo's tracing
keeps a function's meaning (its values, dtypes, gradients, prints and raises are the same traced
or not), so removing the decorator changes only where the graph ends; what it must not do is let
a break into the function that was kept out of the caller's graph on purpose.

So the fix is checked the way the rest of GraphMend is: the file without the decorator is
analysed again, and the fix applies only where that analysis finds no break it did not find
before (a break in the function, or in what it calls, declines with that break named) and the
call's own break is gone. A function that calls code from another project module declines too:
a single file's analysis cannot see whether that code breaks. A decorator that says more than
"disable" (`recursive=False`, which compiles the callees on purpose; `reason=`, which documents
why), or that a comment beside it explains ("does not play well with the views of the cache
tensor", transformers' paged cache), is left alone: it guards against something the analysis
cannot check.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

from ...analysis import analyze_detailed
from ...analysis.symbols import DISABLE_FUNCTIONS, decorator_target
from ...astwalk import walk
from ...findings import Edit, Finding, Span
from ...textedits import apply_edits, parses
from ..context import FixContext
from ..model import DeclineError, Fix, Safety

TITLE = (
    "Remove `@{decorator}` from `{name}`: nothing in it breaks the graph, so dynamo compiles it into "
    "the caller's graph instead of running it eagerly (same values)"
)

# Words of a comment by the decorator that say why it is there.
EXPLAINING_WORDS = ("compil", "dynamo", "disable", "graph", "trac", "break", "inductor", "fullgraph")

# Modules whose functions the analysis models (a break in them is a finding): a call into any other
# module's code is a call the file's analysis cannot see into.
MODELLED_MODULES = frozenset({"torch", "builtins", "math", "operator", "functools", "itertools", "collections", "typing", "einops"})


class RemoveDisableFixer:
    codes = frozenset({"GM502"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call):
            raise DeclineError("no-node", "could not find the call in the source")
        function = _disabled_definition(call, ctx)
        if function is None:
            raise DeclineError(
                "disabled-elsewhere", f"`{ctx.excerpt(call.func)}` is not a function this file defines with a `torch.compiler.disable` decorator"
            )
        decorator = next(d for d in function.decorator_list if ctx.index.qualname(decorator_target(d)) in DISABLE_FUNCTIONS)
        if isinstance(decorator, ast.Call) and (decorator.args or decorator.keywords):
            said = ", ".join([ctx.code(a) for a in decorator.args] + [f"{k.arg}=..." if k.arg else "**..." for k in decorator.keywords])
            raise DeclineError("disable-arguments", f"`@{ctx.code(decorator)}` says more than \"disable\" ({said}): it is there on purpose")
        comment = _explained(decorator, function, ctx)
        if comment is not None:
            raise DeclineError("disable-explained", f"a comment says why the decorator is there (`{comment[:60]}`)")
        foreign = _foreign_call(function, ctx)
        if foreign is not None:
            raise DeclineError(
                "disabled-calls-unseen", f"`{function.name}` calls `{foreign}` from another module, which this file's analysis cannot see into"
            )
        edit = _removal(decorator, ctx)
        return ctx.remember_or_decline(("remove-disable", id(function)), lambda: _checked(finding, ctx, function, decorator, edit))


def _disabled_definition(call: ast.Call, ctx: FixContext) -> ast.FunctionDef | None:
    """The in-file definition the call reaches when it is a decorated disabled function: a
    module-level function by name, or a method of the caller's class through its first parameter."""
    index = ctx.index
    found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    if isinstance(call.func, ast.Name) and call.func.id not in index.imports:
        found = index.functions.get(call.func.id)
    elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        caller = ctx.function_of(call)
        owner = index.owner.get(id(caller)) if caller is not None else None
        params = caller.args.posonlyargs + caller.args.args if caller is not None else []
        if owner is not None and params and call.func.value.id == params[0].arg:
            found = index.method(owner, call.func.attr)
    if not isinstance(found, ast.FunctionDef) or id(found) not in index.disabled:
        return None
    return found


def _foreign_call(function: ast.FunctionDef, ctx: FixContext) -> str | None:
    """The first call, in `function` or the in-file functions it calls, of a function imported
    from a module the analysis does not model; None when there is none."""
    seen: set[int] = set()
    pending = [function]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for call in _calls(current):
            name = ctx.index.qualname(call.func)
            if name is not None and name.split(".")[0] not in MODELLED_MODULES:
                return name
            if isinstance(call.func, ast.Name):
                local = ctx.index.functions.get(call.func.id)
                if isinstance(local, ast.FunctionDef):
                    pending.append(local)
    return None


def _calls(function: ast.FunctionDef) -> Iterator[ast.Call]:
    for stmt in function.body:
        for node in walk(stmt):
            if isinstance(node, ast.Call):
                yield node


def _removal(decorator: ast.expr, ctx: FixContext) -> Edit:
    """Deleting the decorator's lines, where the decorator has them to itself."""
    lines = ctx.source.lines
    first, last = decorator.lineno, decorator.end_lineno or decorator.lineno
    before = lines[first - 1][: decorator.col_offset]
    after = lines[last - 1][decorator.end_col_offset or 0 :]
    if before.replace("(", "").strip() != "@" or after.replace(")", "").strip():
        raise DeclineError("no-node", "could not find the decorator's own lines")
    return Edit(Span(first, 0, last + 1, 0), "")


def _explained(decorator: ast.expr, function: ast.FunctionDef, ctx: FixContext) -> str | None:
    """A comment on the decorator's line, or right above the decorators, that speaks of compiling:
    the decorator is there for a reason the analysis cannot check ("does not play well with the
    views of the cache tensor")."""
    lines = ctx.source.lines
    last = decorator.end_lineno or decorator.lineno
    trailing = lines[last - 1][decorator.end_col_offset or 0 :]
    if "#" in trailing:
        return trailing[trailing.index("#") :].strip()
    above = min(d.lineno for d in function.decorator_list) - 2
    while above >= 0 and lines[above].strip().startswith("#"):
        comment = lines[above].strip()
        if any(word in comment.lower() for word in EXPLAINING_WORDS):
            return comment
        above -= 1
    return None


def _checked(finding: Finding, ctx: FixContext, function: ast.FunctionDef, decorator: ast.expr, edit: Edit) -> Fix:
    """The fix, once the file without the decorator is analysed again: no break it did not have
    before, and the call's own break gone."""
    variant = apply_edits(ctx.text, [edit])
    if not parses(variant):
        raise DeclineError("no-cst-match", "the file without the decorator does not parse")
    removed = edit.span.end_line - edit.span.start_line

    def original_line(line: int) -> int:
        return line + removed if line >= edit.span.start_line else line

    before = Counter((f.code, f.span.start_line, f.span.start_col) for f in ctx.result.findings)
    result = analyze_detailed(variant, ctx.result.path, ctx.result.config)
    after = [f for f in result.findings if not f.if_compiled]
    new = [f for f in after if (f.code, original_line(f.span.start_line), f.span.start_col) not in before]
    if new:
        first = new[0]
        raise DeclineError(
            "disabled-body-breaks",
            f"without the decorator dynamo would break in `{first.function or function.name}` instead ({first.code} on line "
            f"{original_line(first.span.start_line)}): the decorator keeps that break out of the caller's graph",
        )
    if any(f.code == finding.code and original_line(f.span.start_line) == finding.span.start_line for f in after):
        raise DeclineError("still-disabled", "the call still reaches a disabled function without this decorator")
    title = TITLE.format(decorator=ctx.code(decorator), name=function.name)
    return Fix(finding, title, Safety.SAFE, (edit,))
