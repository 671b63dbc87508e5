"""A libcst tree of one function, whose node positions are resolved one body statement at a time.

Fixers find the libcst node of an `ast` node by its exact source span, and change a function by
replacing nodes. Resolving positions (libcst's PositionProvider) and rendering the changed code
both walk the whole tree they are given, and `graphmend check` plans a fix for every finding to
mark it `[*]`: over transformers' models that walk of whole 200-line `forward` methods was more
than half of the check's time. So positions are resolved for the statement of the function body
that holds the node, and a change is rendered for the statements it touches only.

A body statement is rendered on its own under an `if True:` line indented as it is in the file, so
its text (comments before it, continuation lines, nested blocks) comes out exactly as in the file;
that is checked, and where it does not hold (or a node lies outside the body: a decorator, a
parameter) the whole function is used instead, as before.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..findings import Edit, Span
from ..textedits import changed_lines_edit
from .model import DeclineError

WRAPPER = "if True:\n"

SpanKey = tuple[int, int, int, int]  # start line, start column, end line, end column (file lines)


@dataclass
class _Statement:
    """A body statement's place in the function text, and (once resolved) its nodes by span."""

    first: int  # file line of its first line (a comment before it included), as libcst owns it
    last: int  # file line of its last line
    node: cst.BaseStatement
    indent: str
    by_span: dict[SpanKey, list[cst.CSTNode]] | None = None
    nodes: set[int] = field(default_factory=set)  # ids of every node under it
    exact: bool = True  # whether rendered on its own it gives the file's text


@dataclass
class _Tree:
    """What depends on the function's text only (cached across analyses of the same text)."""

    module: cst.Module
    function: cst.FunctionDef | None  # None: not found where expected (the whole tree is used)
    full_by_span: dict[SpanKey, list[cst.CSTNode]] | None = None  # lines relative to the text


# libcst trees are immutable: a function whose text did not change since the last analysis (the
# engine re-analyses after every round of fixes elsewhere in the file) is not parsed again.
_CACHE: dict[str, _Tree] = {}
_CACHE_SIZE = 64


@dataclass
class ParsedFunction:
    """One function of a file as libcst sees it: nodes by span, and edits built from replacements."""

    first_line: int  # file line of the first parsed line (a decorator or the def)
    text: str  # the function's original text (whole lines)
    prefix: str  # WRAPPER in front of an indented function, or ""
    tree: _Tree
    statements: list[_Statement]  # the body's statements, in order ([] when not mapped)

    @property
    def module(self) -> cst.Module:
        return self.tree.module

    def nodes_at(self, span: Span) -> list[cst.CSTNode]:
        key = (span.start_line, span.start_col, span.end_line, span.end_col)
        statement = self._statement_holding(span.start_line, span.end_line)
        if statement is not None and self._resolve(statement):
            found = statement.by_span.get(key) if statement.by_span is not None else None
            if found:
                return found
        shift = self.first_line - 1
        return self._full().get((key[0] - shift, key[1], key[2] - shift, key[3]), [])

    def rewrite(self, replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel]) -> Edit:
        """Apply node replacements and return the (minimal) text edit of the function's lines."""
        old_lines = self.text.split("\n")
        touched = self._statements_touched(replacements)
        if touched is None:
            new_lines = self._render_whole(replacements).split("\n")
        else:
            new_lines = list(old_lines)
            replacer = _Replacer(replacements)
            for statement in sorted(touched, key=lambda s: s.first, reverse=True):
                new_code = _alone(statement.node, statement.indent, self.module).visit(replacer).code
                start = statement.first - self.first_line
                new_lines[start : statement.last - self.first_line + 1] = _body_lines(new_code)
            if replacer.pending:
                raise DeclineError("no-cst-match", "could not locate the code to rewrite (unusual formatting)")
        return changed_lines_edit(self.first_line, old_lines, new_lines)

    # -- positions ------------------------------------------------------------------------------
    def _statement_holding(self, start_line: int, end_line: int) -> _Statement | None:
        for statement in self.statements:
            if statement.first <= start_line and end_line <= statement.last:
                return statement
        return None

    def _resolve(self, statement: _Statement) -> bool:
        """Resolve `statement`'s positions on its own; False where its text would differ."""
        if statement.by_span is not None or not statement.exact:
            return statement.exact
        alone = _alone(statement.node, statement.indent, self.module)
        expected = self.text.split("\n")[statement.first - self.first_line : statement.last - self.first_line + 1]
        if _body_lines(alone.code) != expected:
            statement.exact = False
            return False
        by_span: dict[SpanKey, list[cst.CSTNode]] = {}
        shift = statement.first - 2  # the wrapper's line is line 1
        wrapper = _wrapper_ids(alone, statement.node)
        for node, where in MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider).items():
            if id(node) in wrapper:
                continue
            by_span.setdefault((where.start.line + shift, where.start.column, where.end.line + shift, where.end.column), []).append(node)
            statement.nodes.add(id(node))
        statement.by_span = by_span
        return True

    def _full(self) -> dict[SpanKey, list[cst.CSTNode]]:
        if self.tree.full_by_span is None:
            line_shift = -1 if self.prefix else 0
            by_span: dict[SpanKey, list[cst.CSTNode]] = {}
            for node, where in MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider).items():
                key = (where.start.line + line_shift, where.start.column, where.end.line + line_shift, where.end.column)
                by_span.setdefault(key, []).append(node)
            self.tree.full_by_span = by_span
        return self.tree.full_by_span

    # -- rendering ------------------------------------------------------------------------------
    def _statements_touched(self, replacements: dict) -> list[_Statement] | None:  # type: ignore[type-arg]
        """The resolved statements holding every replaced node, or None if one lies elsewhere or
        is a body statement that goes away (its block alone would be left empty)."""
        touched: dict[int, _Statement] = {}
        for node, replacement in replacements.items():
            holder = next((s for s in self.statements if s.by_span is not None and id(node) in s.nodes), None)
            if holder is None or (holder.node is node and not _leaves_a_statement(replacement)):
                return None
            touched[id(holder)] = holder
        return list(touched.values()) if touched else None

    def _render_whole(self, replacements: dict) -> str:  # type: ignore[type-arg]
        transformer = _Replacer(replacements)
        new_module = self.module.visit(transformer)
        if transformer.pending:
            raise DeclineError("no-cst-match", "could not locate the code to rewrite (unusual formatting)")
        return new_module.code[len(self.prefix) :]


def parse_function(source_lines: list[str], function: ast.FunctionDef | ast.AsyncFunctionDef) -> ParsedFunction:
    """`function` (an ast node of the file whose lines are `source_lines`) parsed with libcst."""
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    last = function.end_lineno or function.lineno
    text = "\n".join(source_lines[first - 1 : last]) + "\n"
    # An indented function (a method) is parsed under an `if True:` line; a top-level one as is.
    prefix = WRAPPER if text[:1].isspace() else ""
    tree = _CACHE.get(prefix + text)
    if tree is None:
        tree = _parse(prefix + text)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[prefix + text] = tree
    return ParsedFunction(first, text, prefix, tree, _body_statements(tree.function, function, source_lines))


def _parse(code: str) -> _Tree:
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        raise DeclineError("unparsable-function", f"libcst cannot parse the enclosing function ({exc.message})") from exc
    top: cst.BaseStatement | None = module.body[0] if module.body else None
    if isinstance(top, cst.If) and isinstance(top.body, cst.IndentedBlock) and top.body.body:
        top = top.body.body[0]
    return _Tree(module, top if isinstance(top, cst.FunctionDef) else None)


def _body_statements(function: cst.FunctionDef | None, node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[_Statement]:
    """The function body's libcst statements matched to `node.body` (a `SimpleStatementLine` holds
    as many ast statements as it has `;`-separated parts); [] when they do not match."""
    if function is None or not isinstance(function.body, cst.IndentedBlock):
        return []
    statements: list[_Statement] = []
    position = 0
    for cst_statement in function.body.body:
        count = len(cst_statement.body) if isinstance(cst_statement, cst.SimpleStatementLine) else 1
        group = node.body[position : position + count]
        if len(group) != count:
            return []
        position += count
        start = min([group[0].lineno] + [d.lineno for d in getattr(group[0], "decorator_list", [])])
        first = start - len(getattr(cst_statement, "leading_lines", ()))
        last = max(s.end_lineno or s.lineno for s in group)
        line = lines[start - 1] if start <= len(lines) else ""
        statements.append(_Statement(first, last, cst_statement, line[: len(line) - len(line.lstrip())]))
    return statements if position == len(node.body) else []


def _alone(statement: cst.BaseStatement, indent: str, like: cst.Module) -> cst.Module:
    """A module holding only `statement`, under an `if True:` line, indented by `indent`."""
    block = cst.IndentedBlock(body=[statement], indent=indent)
    return like.with_changes(body=[cst.If(test=cst.Name("True"), body=block)], header=[], footer=[])


def _leaves_a_statement(replacement: object) -> bool:
    if isinstance(replacement, cst.FlattenSentinel):
        return len(replacement.nodes) > 0
    return isinstance(replacement, cst.CSTNode) or callable(replacement)  # a callable changes the node it is given


def _wrapper_ids(alone: cst.Module, statement: cst.BaseStatement) -> set[int]:
    """Ids of the nodes `_alone` put around `statement` (the module, the `if True:`, its block)."""
    ids: set[int] = set()
    stack: list[cst.CSTNode] = [alone]
    while stack:
        node = stack.pop()
        if node is not statement:
            ids.add(id(node))
            stack.extend(node.children)
    return ids


def _body_lines(code: str) -> list[str]:
    """The lines of a module rendered by `_alone`, without its `if True:` line."""
    return code.split("\n")[1:-1]


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict) -> None:  # type: ignore[type-arg]
        super().__init__()
        self.replacements = replacements
        self.pending = set(map(id, replacements))

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        replacement = self.replacements.get(original_node)
        if replacement is None:
            return updated_node
        self.pending.discard(id(original_node))
        return replacement(updated_node) if callable(replacement) else replacement  # a callable: the node as updated below


class NodeSwap(cst.CSTTransformer):
    """Replaces nodes by identity, all in one pass (`deep_replace` rebuilds the tree each time,
    so the nodes of a second replacement would no longer be in it)."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        return self.replacements.get(original_node, updated_node)
