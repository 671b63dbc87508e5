"""GM519: a comprehension in a function dynamo runs eagerly -> the same loop written as a `for`.

On Python 3.11 a list, set or dict comprehension is a function of its own. Where a break makes
dynamo run the enclosing function eagerly (transformers' `check_model_inputs` wrapper, whose
decorated forward breaks inside its `try`), dynamo still compiles each comprehension alone, is
handed its loop's iterator, cannot iterate it, and reports a break of its own ("Missing
tp_iternext", once per model in 10 of transformers 4.57.6's breaking models). Written as a `for`
loop in the enclosing function, the same code runs eagerly with it, with no frame of its own and
no break. Python 3.12 inlines comprehensions, and there the rule does not fire.

The loop does what the comprehension did, in the same order: the first iterable evaluated
first, each `if` tested in turn, the element (for a dict, the key before the value) computed per
item and added to a new list, set or dict that the statement then assigns or returns. The
comprehension's own names must not leak: a loop variable the function uses elsewhere is renamed
in the loop. Declined where the loop could not behave the same: an element that defines a
function or another comprehension (closures over the loop variable), `:=`, `await`, async
iteration, or a comprehension that is not the whole value of an assignment or `return`.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...astwalk import walk
from ...findings import Finding
from ..context import FixContext
from ..flow import parameter_names
from ..model import DeclineError, Fix, Safety
from .generated import fresh_name

TITLE = (
    "Build the {kind} with a `for` loop instead of a comprehension: on Python 3.11 the comprehension is a frame "
    "of its own, which dynamo tries to compile alone while it runs `{function}` eagerly (the same values, in the same order)"
)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp)
SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)
EMPTY = {ast.ListComp: "[]", ast.SetComp: "set()", ast.DictComp: "{}"}
KIND = {ast.ListComp: "list", ast.SetComp: "set", ast.DictComp: "dict"}


class ComprehensionLoopFixer:
    codes = frozenset({"GM519"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        comprehension = ctx.node_for(finding, COMPREHENSIONS)
        if not isinstance(comprehension, COMPREHENSIONS):
            raise DeclineError("no-node", "could not find the comprehension in the source")
        statement = ctx.statement_of(comprehension)
        function = ctx.function_of(comprehension)
        if statement is None or function is None:
            raise DeclineError("not-in-function", "the comprehension is not inside a function")
        whole = (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.value is comprehension
        ) or (isinstance(statement, ast.Return) and statement.value is comprehension)
        if not whole or not isinstance(statement, (ast.Assign, ast.Return)):
            raise DeclineError("comprehension-in-expression", "the comprehension is not the whole value of an assignment or `return`")
        inner = _inner_parts(comprehension)
        for part in inner:
            for node in walk(part):
                if isinstance(node, SCOPED):
                    raise DeclineError(
                        "comprehension-scope", f"`{ctx.excerpt(node, 30)}` in the comprehension would see a different scope in a loop"
                    )
        if any(g.is_async for g in comprehension.generators):
            raise DeclineError("comprehension-scope", "the comprehension iterates asynchronously")
        renamed = _renamed_targets(ctx, function, comprehension)
        lines = _loop_lines(ctx, function, statement, comprehension, renamed)
        line = ctx.cst_node(function, statement, cst.SimpleStatementLine)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            raise DeclineError("several-statements", "the line holds more than one statement")
        try:
            parsed = cst.parse_module("\n".join(lines) + "\n").body
        except cst.ParserSyntaxError:
            raise DeclineError("no-cst-match", "the loop does not parse") from None
        new = [_indented_by(statement_, _indent_unit(ctx, function)) for statement_ in parsed]
        new[0] = new[0].with_changes(leading_lines=line.leading_lines)
        edit = ctx.rewrite(function, {line: cst.FlattenSentinel(new)})
        title = TITLE.format(kind=KIND[type(comprehension)], function=_eager_function(finding, function))
        return Fix(finding, title, Safety.SAFE, (edit,))


def _indent_unit(ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """One level of indentation as the file writes it: the function body's, less the `def`'s."""
    line = ctx.source.lines[function.body[0].lineno - 1]
    body = line[: len(line) - len(line.lstrip())]
    return body[function.col_offset :] or "    "


def _indented_by(statement: cst.SimpleStatementLine | cst.BaseCompoundStatement, unit: str) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
    """The generated loop's blocks indented by the file's unit (libcst would use the indentation
    it guesses for the function's text, which for a nested function is the whole offset)."""

    class Indent(cst.CSTTransformer):
        def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
            return updated.with_changes(indent=unit)

    indented = statement.visit(Indent())
    assert isinstance(indented, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return indented


def _eager_function(finding: Finding, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The function dynamo runs eagerly: the finding's, without the comprehension's own frame."""
    qualified = finding.function
    if qualified.endswith((".<listcomp>", ".<setcomp>", ".<dictcomp>")):
        qualified = qualified.rsplit(".", 1)[0]
    return qualified or function.name


def _inner_parts(comprehension: ast.ListComp | ast.SetComp | ast.DictComp) -> list[ast.expr]:
    """What the comprehension evaluates in its own scope: every part but the first iterable."""
    elements = [comprehension.key, comprehension.value] if isinstance(comprehension, ast.DictComp) else [comprehension.elt]
    parts: list[ast.expr] = [*elements]
    for number, generator in enumerate(comprehension.generators):
        parts.append(generator.target)
        parts.extend(generator.ifs)
        if number:
            parts.append(generator.iter)
    return parts


def _target_names(comprehension: ast.ListComp | ast.SetComp | ast.DictComp) -> list[str]:
    names: list[str] = []
    for generator in comprehension.generators:
        for node in walk(generator.target):
            if isinstance(node, ast.Name):
                names.append(node.id)
            elif not isinstance(node, (ast.Tuple, ast.List, ast.expr_context)):
                raise DeclineError("comprehension-scope", f"the loop target `{ast.unparse(generator.target)}` is not plain names")
    return names


def _names_bound(comprehension: ast.ListComp | ast.SetComp | ast.DictComp) -> set[str]:
    return {n.id for g in comprehension.generators for n in walk(g.target) if isinstance(n, ast.Name)}


def _renamed_targets(
    ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, comprehension: ast.ListComp | ast.SetComp | ast.DictComp
) -> dict[str, str]:
    """Loop variables the function uses outside the comprehension -> fresh names (a `for` loop
    binds its variables in the function, where the comprehension kept them to itself)."""
    declared = {name for n in walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    parameters = parameter_names(function)
    renamed: dict[str, str] = {}
    for name in dict.fromkeys(_target_names(comprehension)):
        # a comprehension that binds the name itself (this one, or another: `{w: i for i, w in ...}`)
        # reads its own variable, not the function's
        own = {id(n) for other in walk(function) if isinstance(other, COMPREHENSIONS) and name in _names_bound(other)
               for part in _inner_parts(other) for n in walk(part)}  # fmt: skip
        used = name in declared or name in parameters or any(isinstance(n, ast.Name) and n.id == name and id(n) not in own for n in walk(function))
        if used:
            renamed[name] = fresh_name(function, f"_graphmend_{name}")
    return renamed


def _loop_lines(
    ctx: FixContext,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    statement: ast.Assign | ast.Return,
    comprehension: ast.ListComp | ast.SetComp | ast.DictComp,
    renamed: dict[str, str],
) -> list[str]:
    inside = {id(n) for part in _inner_parts(comprehension) for n in walk(part)}

    def code(node: ast.expr) -> str:
        replacements = {id(n): renamed[n.id] for n in walk(node) if isinstance(n, ast.Name) and n.id in renamed and id(n) in inside}
        text = ctx.code_with(node, replacements) if replacements else ctx.code(node)
        return f"({text})" if "\n" in text and not text.startswith(("(", "[", "{")) else text

    result = _result_name(ctx, function, statement, comprehension)
    lines = [f"{result} = {EMPTY[type(comprehension)]}"]
    depth = 0
    for generator in comprehension.generators:
        lines.append("    " * depth + f"for {code(generator.target)} in {code(generator.iter)}:")
        depth += 1
        for test in generator.ifs:
            lines.append("    " * depth + f"if {code(test)}:")
            depth += 1
    pad = "    " * depth
    if isinstance(comprehension, ast.DictComp):
        key = code(comprehension.key)
        if not isinstance(comprehension.key, (ast.Name, ast.Constant)):  # the key is computed before the value, as in the comprehension
            key_name = fresh_name(function, "_graphmend_key")
            lines.append(f"{pad}{key_name} = {key}")
            key = key_name
        lines.append(f"{pad}{result}[{key}] = {code(comprehension.value)}")
    else:
        method = "append" if isinstance(comprehension, ast.ListComp) else "add"
        lines.append(f"{pad}{result}.{method}({code(comprehension.elt)})")
    if isinstance(statement, ast.Return):
        lines.append(f"return {result}")
    elif result != ctx.code(statement.targets[0]):
        lines.append(f"{ctx.code(statement.targets[0])} = {result}")
    return lines


def _result_name(
    ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.Assign | ast.Return, comprehension: ast.expr
) -> str:
    """The name the loop builds into: the assigned name itself where nothing could see it half
    built (the comprehension does not read it, and no `try` in the function could catch an error
    from the loop), else a fresh name assigned (or returned) after the loop."""
    if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        name = statement.targets[0].id
        reads = any(isinstance(n, ast.Name) and n.id == name for n in walk(comprehension))
        guarded = any(isinstance(n, ast.Try) for n in walk(function))
        if not reads and not guarded:
            return name
    return fresh_name(function, "_graphmend_items")
