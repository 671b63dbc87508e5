"""Everything a fixer needs about one file, and the libcst machinery to change one function of it.

Fixers decide on `ast` (where the analysis's facts live: kinds per node, the module index) and
change code with libcst, scoped to the enclosing function (cst_function.py): only that function's
text is parsed, and only the statements a fix touches are rendered, so a fix costs milliseconds and
everything outside the changed statements keeps its exact formatting and comments. Nodes are
matched between the two trees by their exact source span (both libcst's PositionProvider and `ast`
exclude parentheses).
"""

from __future__ import annotations

import ast
import bisect
import copy
import itertools
from collections.abc import Callable, Iterator
from typing import TypeVar

import libcst as cst

from ..analysis import AnalysisResult
from ..analysis.kinds import Kind
from ..analysis.source import SourceFile
from ..astwalk import child_nodes, walk
from ..findings import Edit, Finding, Span
from ..quoting import excerpt
from .cst_function import ParsedFunction, parse_function
from .model import DeclineError

CstNodeT = TypeVar("CstNodeT", bound=cst.CSTNode)

T = TypeVar("T")


class FixContext:
    """One file under repair: its text, the analysis facts and the function-scoped editor."""

    def __init__(self, result: AnalysisResult) -> None:
        if result.tree is None or result.source is None or result.index is None:
            raise ValueError("FixContext needs analyze_detailed(..., keep_facts=True)")
        self.source: SourceFile = result.source
        self.text = self.source.text
        self.tree = result.tree
        self.index = result.index
        self.kinds = result.kinds
        if any(f.if_compiled for f in result.findings):
            # code nothing known compiles is never rewritten, and its findings must not shape the
            # fixes of compiled code either (an `if` it breaks at moved into an op with a call)
            result = copy.copy(result)
            result.findings = [f for f in result.findings if not f.if_compiled]
        self.result = result
        self._parents: dict[int, ast.AST] = {}
        self._by_line: dict[int, list[ast.AST]] = {}
        self._indexed: set[int] = set()  # positions in tree.body already indexed
        self._starts: list[int] | None = None
        self._functions: dict[int, ParsedFunction] = {}
        self._by_span: dict[int, dict[Span, list[ast.AST]]] = {}
        self._memo: dict[tuple, object] = {}
        self._statements: dict[int, ast.stmt | None] = {}  # id(expression) -> its statement (statement_of)
        # Whether a fix is wanted only to know that one exists (`check`'s `[*]`): fixers whose
        # decision is made before they render code (the ordered op) may then skip the rendering,
        # which was most of `check`'s planning time on large files. Such a fix's edits are then
        # not a rewrite to apply (empty, or with empty site bodies).
        self.decide_only = False

    # -- the ast side ---------------------------------------------------------------------------
    def _index_top_level(self, line: int | None) -> None:
        """Record parents and nodes-by-first-line for the top-level statement covering `line` (all
        of them when `line` is None). Fixers ask about one function; walking a whole 3000-line
        module for every finding dominated fixing large files."""
        body = self.tree.body
        if line is None:
            chosen: range | list[int] = range(len(body))
        else:
            starts = self._top_starts()
            position = bisect.bisect_right(starts, line) - 1
            chosen = [position] if position >= 0 else []
        for position in chosen:
            if position in self._indexed:
                continue
            self._indexed.add(position)
            statement = body[position]
            self._parents[id(statement)] = self.tree
            for node in walk(statement):
                node_line = getattr(node, "lineno", None)
                if node_line is not None:
                    self._by_line.setdefault(node_line, []).append(node)
                for child in child_nodes(node):
                    self._parents[id(child)] = node

    def _top_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [
                min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]) for s in self.tree.body
            ]
        return self._starts

    def parent(self, node: ast.AST) -> ast.AST | None:
        if node is self.tree:
            return None
        found = self._parents.get(id(node))
        if found is None:
            self._index_top_level(_line_within(node))
            found = self._parents.get(id(node))
            if found is None:  # a node of no line (an operator) under a statement not indexed yet
                self._index_top_level(None)
                found = self._parents.get(id(node))
        return found

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def remember(self, key: tuple, compute: Callable[[], T]) -> T:
        """`compute()` once per key for this context: what every finding of one statement or one
        function shares (an `if` whose test has 2,000 tensor operands is planned once, not 2,000
        times; a function's local names are collected once)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[return-value]

    def remember_or_decline(self, key: tuple, compute: Callable[[], T]) -> T:
        """`remember`, for a `compute` that may decline: the decline is remembered too, and each
        caller gets its own DeclineError (one object raised again and again grows its traceback)."""

        def outcome() -> T | DeclineError:
            try:
                return compute()
            except DeclineError as error:
                return error

        result = self.remember(key, outcome)
        if isinstance(result, DeclineError):
            raise DeclineError(result.key, result.reason)
        return result

    def contains(self, outer: ast.AST, inner: ast.AST | None) -> bool:
        """`inner` is `outer` or below it: walks up from `inner` (a few parents) instead of down
        through `outer` (a test of 2,000 operands, once per finding in it, was quadratic)."""
        if inner is None:
            return False
        return inner is outer or any(a is outer for a in self.ancestors(inner))

    def kind(self, node: ast.AST) -> Kind:
        """What the analysis knows `node` to be, as the rewritten code will see it when it runs:
        a number drawn with `random` is a 0-d value only while dynamo traces; eagerly (where the
        rewrite must work too) it is a Python number, which `torch.where` does not take; a sum
        accumulated in a loop is a Python number where the loop did not run."""
        kind = self.kinds.get(id(node), Kind.UNKNOWN)
        if kind is Kind.RANDOM_NUMBER:
            return Kind.PY
        return Kind.UNKNOWN if kind is Kind.TENSOR_OR_NUMBER else kind

    def span(self, node: ast.AST) -> Span:
        return self.source.span(node)

    def node_for(self, finding: Finding, types: tuple[type, ...] = (ast.AST,)) -> ast.AST | None:
        """The node of `types` whose span is exactly the finding's span: the one the rule matched
        (the finding's anchor) when it is of `types`, else the outermost."""
        target = finding.span
        self._index_top_level(target.start_line)
        by_span = self._by_span.get(target.start_line)
        if by_span is None:  # spans of the line's nodes, computed once (a line may hold thousands)
            by_span = self._by_span[target.start_line] = {}
            for node in self._by_line.get(target.start_line, ()):
                by_span.setdefault(self.span(node), []).append(node)
        candidates = [node for node in by_span.get(target, ()) if isinstance(node, types)]
        anchored = [node for node in candidates if type(node).__name__ == finding.anchor]
        chosen = anchored or candidates
        return chosen[0] if chosen else None

    def function_lines(self, finding: Finding) -> tuple[int, int] | None:
        """First and last line (decorators included) of the function the finding is in."""
        node = self.node_for(finding)
        function = self.function_of(node) if node is not None else None
        if function is None:
            return None
        first = min([function.lineno] + [d.lineno for d in function.decorator_list])
        return first, function.end_lineno or function.lineno

    def function_of(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return ancestor
        return None

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The statement `node` is part of. Remembered for every expression on the way up, so that
        asking for each operand of a 2,000-term sum costs a walk of the sum once, not 2,000 times."""
        if isinstance(node, ast.stmt):
            return node
        passed: list[int] = []
        found: ast.stmt | None = None
        for current in itertools.chain((node,), self.ancestors(node)):
            if id(current) in self._statements:
                found = self._statements[id(current)]
                break
            if isinstance(current, ast.stmt):
                found = current
                break
            passed.append(id(current))
        for key in passed:
            self._statements[key] = found
        return found

    def if_testing(self, finding: Finding) -> tuple[ast.If, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The `if` whose test holds the finding's node, and the function it is in; None when the
        finding is anywhere else (a fixer that rewrites such an `if` declines then)."""
        node = self.node_for(finding)
        statement = self.statement_of(node) if node is not None else None
        function = self.function_of(statement) if statement is not None else None
        if not isinstance(statement, ast.If) or function is None or not self.contains(statement.test, node):
            return None
        return statement, function

    def code(self, node: ast.AST) -> str:
        """The exact source text of a node (comments inside it included)."""
        span = self.span(node)
        lines = self.source.lines
        if span.start_line == span.end_line:
            return lines[span.start_line - 1][span.start_col : span.end_col]
        parts = [lines[span.start_line - 1][span.start_col :]]
        parts.extend(lines[span.start_line : span.end_line - 1])
        parts.append(lines[span.end_line - 1][: span.end_col])
        return "\n".join(parts)

    def excerpt(self, node: ast.AST, limit: int = 40) -> str:
        """A node's source text as a message quotes it: one line, cut visibly (`quoting.excerpt`)."""
        return excerpt(self.code(node), limit)

    def code_with(self, node: ast.AST, replacements: dict[int, str]) -> str:
        """The source text of `node` with each node below it whose id is in `replacements` written
        as the text given there (the outermost one, where a replaced node holds another)."""
        text, base = self.code(node), self.span(node)
        pieces: list[tuple[int, int, str]] = []
        pending = [node]
        while pending:
            current = pending.pop()
            if current is not node and id(current) in replacements:
                span = self.span(current)
                pieces.append((char_offset(self, base, span), char_offset(self, base, span, end=True), replacements[id(current)]))
                continue
            pending.extend(child_nodes(current))
        for start, end, piece in sorted(pieces, reverse=True):
            text = text[:start] + piece + text[end:]
        return replacements.get(id(node), text)

    def atom(self, node: ast.AST) -> str:
        """The node's text, parenthesised unless it already is an atom (for `.method()` and operators)."""
        text = self.code(node)
        if isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Dict)):
            return text
        return f"({text})"

    def argument(self, node: ast.AST) -> str:
        """The node's text as a call argument: parenthesised only where a comma would split it."""
        text = self.code(node)
        if isinstance(node, (ast.Tuple, ast.GeneratorExp, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred)):
            return f"({text})"
        if "\n" in text and isinstance(node, ast.IfExp):
            return f"({text})"  # its own lines, not run on into the next argument's
        return text

    def qualname(self, node: ast.AST) -> str | None:
        return self.index.qualname(node)

    def numpy_call_in(self, expr: ast.expr) -> ast.Call | None:
        """A NumPy call inside `expr`, or a name `expr` reads that its function binds to one
        (`kl = torch.mean(d).cpu().numpy()`, then `print(f"{kl:.2f}")`): dynamo traces its result
        as a tensor, eagerly it is an ndarray or a NumPy number, so no rewrite may hand it to
        torch or to an op as a tensor. A call is `numpy.<f>(...)` or a tensor's `.numpy()`."""
        direct = next((n for n in walk(expr) if isinstance(n, ast.Call) and self._numpy_call(n)), None)
        if direct is not None:
            return direct
        names = [n.id for n in walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        function = self.function_of(expr) if names else None
        if function is None:
            return None
        bound = self.remember(("numpy-names", id(function)), lambda: self._numpy_names(function))
        return next((bound[name] for name in names if name in bound), None)

    def _numpy_names(self, function: ast.AST) -> dict[str, ast.Call]:
        """The names `function` binds (anywhere in it) to a value holding a NumPy call, with the call."""
        found: dict[str, ast.Call] = {}
        for node in walk(function):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            value = getattr(node, "value", None)
            if value is None or not targets:
                continue
            call = next((n for n in walk(value) if isinstance(n, ast.Call) and self._numpy_call(n)), None)
            if call is not None:
                for target in targets:
                    for name in (t.id for t in walk(target) if isinstance(t, ast.Name)):
                        found.setdefault(name, call)
        return found

    def _numpy_call(self, node: ast.Call) -> bool:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "numpy" and not node.args:
            return True
        return (self.qualname(node.func) or "").startswith("numpy.")

    # -- torch ----------------------------------------------------------------------------------
    def torch_name(self) -> str:
        """The name `torch` is bound to at module level (`import torch as th` -> "th")."""
        for local, target in self.index.imports.items():
            if target == "torch":
                return local
        if "torch" in self.index.top_level_names:
            raise DeclineError("torch-shadowed", "the name `torch` is bound to something else in this module")
        return "torch"

    def after_imports_line(self) -> int:
        """The line after the module's leading docstring, `__future__` and import block."""
        line = 1
        for stmt in self.tree.body:
            is_docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
            if is_docstring or isinstance(stmt, (ast.Import, ast.ImportFrom)):
                line = (stmt.end_lineno or stmt.lineno) + 1
                continue
            break
        return line

    def torch_bound_at(self) -> tuple[int, str]:
        """(line, indentation) where module-level code may first use torch: right after the first
        module-level `import torch`, inside the same block when it is guarded (transformers'
        `if is_torch_available(): import torch`), so the new code runs exactly when torch was
        imported; never before the import block."""
        after_imports = self.after_imports_line()
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for node in walk(stmt):
                if isinstance(node, ast.Import) and any(_binds_torch(alias, self.torch_name()) for alias in node.names):
                    end = (node.end_lineno or node.lineno) + 1
                    line_text = self.source.lines[node.lineno - 1] if node.lineno <= len(self.source.lines) else ""
                    indent = line_text[: len(line_text) - len(line_text.lstrip())]
                    if node is stmt or len(indent) != node.col_offset:  # top level, or `if x: import torch`
                        return max(after_imports, (stmt.end_lineno or stmt.lineno) + 1), ""
                    return end, indent
        return after_imports, ""

    def import_edit(self) -> Edit | None:
        """`import torch` when the module does not import it under any name."""
        if any(target == "torch" for target in self.index.imports.values()):
            return None
        line = self.after_imports_line()
        return Edit(Span(line, 0, line, 0), "import torch\n")

    # -- the libcst side --------------------------------------------------------------------------
    def _parsed(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> ParsedFunction:
        parsed = self._functions.get(id(function))
        if parsed is None:
            parsed = self._functions[id(function)] = parse_function(self.source.lines, function)
        return parsed

    def cst_node(self, function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST, kind: type[CstNodeT]) -> CstNodeT:
        span = self.span(node)
        parsed = self._parsed(function)
        for candidate in parsed.nodes_at(span):
            if isinstance(candidate, kind):
                return candidate
        raise DeclineError("no-cst-match", "could not locate the code to rewrite (unusual formatting)")

    def block_of(self, statement: ast.stmt) -> list[ast.stmt]:
        """The statement list holding `statement` (its parent's body, orelse or finalbody), or []."""
        parent = self.parent(statement)
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and any(s is statement for s in block):
                return block
        return []

    def remove_statement(self, function: ast.FunctionDef | ast.AsyncFunctionDef, statement: ast.stmt, replacements: dict) -> None:  # type: ignore[type-arg]
        """Add to `replacements` the removal of `statement` (a simple statement), moving the comment
        lines above it onto the next statement of its block, so a fix that removes a line keeps
        what the user wrote about it."""
        line = self.cst_node(function, statement, cst.SimpleStatementLine)
        replacements[line] = cst.RemovalSentinel.REMOVE
        if not any(empty.comment is not None for empty in line.leading_lines):
            return
        block = self.block_of(statement)
        index = next((i for i, s in enumerate(block) if s is statement), len(block))
        if index + 1 >= len(block):
            return  # the last statement of its block: nothing below to carry the comment
        following = self.cst_node(function, block[index + 1], cst.BaseStatement)  # type: ignore[type-abstract]
        existing = replacements.get(following)
        if existing is not None and not isinstance(existing, cst.BaseStatement) and not callable(existing):
            return  # replaced by several statements or removed too: the comment goes with the line
        moved = list(line.leading_lines)

        def with_comments(updated: cst.CSTNode) -> cst.CSTNode:
            base = existing(updated) if callable(existing) else (existing if existing is not None else updated)
            return base.with_changes(leading_lines=[*moved, *base.leading_lines])  # type: ignore[union-attr]

        replacements[following] = with_comments

    def render(self, function: ast.FunctionDef | ast.AsyncFunctionDef, node: cst.CSTNode) -> str:
        """A libcst node's source in the style (indentation, line breaks) of `function`'s file."""
        return self._parsed(function).module.code_for_node(node)

    def rewrite(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel],
    ) -> Edit:
        """Apply node replacements inside one function and return the (minimal) text edit."""
        return self._parsed(function).rewrite(replacements)


def _line_within(node: ast.AST) -> int | None:
    """A line `node` spans: its own, else that of a node under it (`ast.arguments`, a
    comprehension), so that finding its parent indexes one top-level statement, not the module."""
    line = getattr(node, "lineno", None)
    if line is not None:
        return line
    return next((inner.lineno for inner in walk(node) if hasattr(inner, "lineno")), None)


def char_offset(ctx: FixContext, base: Span, span: Span, end: bool = False) -> int:
    """Where (line, column) of `span` falls in the text of the node spanning `base` (ctx.code)."""
    line, column = (span.end_line, span.end_col) if end else (span.start_line, span.start_col)
    if line == base.start_line:
        return column - base.start_col
    lines = ctx.source.lines
    offset = len(lines[base.start_line - 1]) - base.start_col + 1
    for number in range(base.start_line + 1, line):
        offset += len(lines[number - 1]) + 1
    return offset + column


def _binds_torch(alias: ast.alias, torch_name: str) -> bool:
    """`import torch`, `import torch.nn` (binds `torch`) or `import torch as <the module's name>`."""
    if alias.name.split(".")[0] != "torch":
        return False
    bound = alias.asname or alias.name.split(".")[0]
    return bound == torch_name
