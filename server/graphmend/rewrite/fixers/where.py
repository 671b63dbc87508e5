"""GM101/GM102: a branch on a tensor value -> `torch.where`, when that provably keeps the meaning.

`torch.where(c, a, b)` computes both `a` and `b` and selects element-wise, so the rewrite is only
equivalent to the branch when (taxonomy §2.1, demos d1-d9):
- the condition is a single tensor value (0-d), so every element selects the same branch;
- both branch values are tensors (`torch.where` turns a Python number into a tensor);
- the branches are pure and cannot raise (purity.py): the branch not taken is evaluated too;
- every name the rewrite assigns is defined on both paths;
- both values have the same dtype and shape (signatures.py), or `where` would promote/broadcast;
- where a branch applies a function undefined on part of its domain (sqrt, log, division...),
  its argument is masked too ("double where"), so the gradient through the branch not taken
  stays finite instead of becoming NaN.
Forms: if/else and elif chains assigning names, a no-else update (`if c: x = f(x)`), returns in
both branches or an early return followed by the fall-through return, and `a if c else b`. A
Python-level prefix of an `and` chain (`if mask is not None and not torch.all(mask == 1):`) stays
a Python `if` (dynamo knows its value), and only the tensor part becomes a `where`.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, SCALAR_KINDS, TENSOR_KINDS
from ...findings import Finding
from ..context import FixContext
from ..flow import defined_before, read_after
from ..model import DeclineError, Fix, Safety
from ..purity import check_pure
from ..signatures import Signatures, floating_names

# Functions undefined (or with an infinite derivative) somewhere, and a value inside their domain
# with a finite derivative, used to mask the argument on the path not taken.
RESTRICTED = {
    "sqrt": "1", "rsqrt": "1", "log": "1", "log2": "1", "log10": "1", "reciprocal": "1", "log1p": "0",
    "acos": "0", "asin": "0", "atanh": "0", "acosh": "2",
}


@dataclass
class _Branch:
    test: ast.expr | None  # None: the else branch (or the value before the if)
    body: list[ast.stmt]
    values: dict[str, ast.expr] = field(default_factory=dict)


COND_TITLE = "Select with torch.cond instead of branching on a tensor (only the chosen branch runs)"


def _decline(key: str, reason: str) -> DeclineError:
    return DeclineError(key, reason)


class WhereFixer:
    codes = frozenset({"GM101", "GM102"})
    safety = Safety.SAFE
    title = "Select with torch.where instead of branching on a tensor"

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding, (ast.expr,))
        if node is None:
            raise _decline("no-node", "could not find the condition in the source")
        function = ctx.function_of(node)
        if function is None:
            raise _decline("not-in-function", "the branch is not inside a function")
        if finding.code == "GM102":
            return self._ternary(finding, ctx, function, node)
        statement = _enclosing_if(ctx, node)
        if statement is None:
            raise _decline("not-an-if", "the tensor condition is not the test of an `if` statement")
        return _IfRewrite(finding, ctx, function, statement).build()

    # -- a if c else b ------------------------------------------------------------------------
    def _ternary(self, finding: Finding, ctx: FixContext, function: ast.FunctionDef, node: ast.expr) -> Fix:
        ifexp = next((a for a in [node, *ctx.ancestors(node)] if isinstance(a, ast.IfExp) and _contains(a.test, node)), None)
        if ifexp is None:
            raise _decline("not-an-if", "the tensor condition is not the test of a conditional expression")
        torch = ctx.torch_name()
        condition = _condition_text(ctx, ifexp.test, torch)
        for value, role in ((ifexp.body, "the value when true"), (ifexp.orelse, "the value when false")):
            _require_tensor(ctx, value, role)
            check_pure(ctx, value, role)
        signatures = Signatures(ctx, floating_names(ctx, function), at=ctx.statement_of(ifexp))
        _require_same_type(ctx, signatures, [ifexp.body, ifexp.orelse], "the two values")
        true_text = _mask_restricted(ctx, ifexp.body, torch, condition, selected=True)
        false_text = _mask_restricted(ctx, ifexp.orelse, torch, condition, selected=False)
        replacement = cst.parse_expression(where_call(torch, condition, true_text, false_text))
        target = ctx.cst_node(function, ifexp, cst.IfExp)
        edits = [ctx.rewrite(function, {target: replacement})]
        return _with_import(ctx, finding, edits, self.title)


WIDTH = 88  # beyond this, each argument of the generated call goes on its own line


def where_call(torch: str, condition: str, true_value: str, false_value: str) -> str:
    one_line = f"{torch}.where({condition}, {true_value}, {false_value})"
    if len(one_line) <= WIDTH and "\n" not in one_line:
        return one_line
    arguments = "".join(f"    {textwrap.indent(a, '    ').lstrip()},\n" for a in (condition, true_value, false_value))
    return f"{torch}.where(\n{arguments})"


def cond_call(torch: str, condition: str, true_value: str, false_value: str) -> str:
    one_line = f"{torch}.cond({condition}, lambda: {true_value}, lambda: {false_value})"
    if len(one_line) <= WIDTH and "\n" not in one_line:
        return one_line
    arguments = "".join(
        f"    {textwrap.indent(a, '    ').lstrip()},\n" for a in (condition, f"lambda: {true_value}", f"lambda: {false_value}")
    )
    return f"{torch}.cond(\n{arguments})"


# Layers and operations whose cost makes evaluating both branches wasteful.
_COSTLY_FUNCTIONS = frozenset(
    {"matmul", "bmm", "mm", "einsum", "linear", "conv1d", "conv2d", "conv3d", "scaled_dot_product_attention", "baddbmm"}
)


def _costly(ctx: FixContext, value: ast.expr) -> bool:
    for node in ast.walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return True
        if not isinstance(node, ast.Call):
            continue
        name = ctx.qualname(node.func)
        if name is not None and name.rsplit(".", 1)[1] in _COSTLY_FUNCTIONS:
            return True
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            function = ctx.function_of(node)
            owner = ctx.index.owner.get(id(function)) if function is not None else None
            if owner is not None and owner.attr_torch_classes.get(func.attr) in _PARAMETRIC_LAYERS:
                return True
    return False


_PARAMETRIC_LAYERS = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Embedding"}
)


def _with_import(ctx: FixContext, finding: Finding, edits: list, title: str) -> Fix:
    import_edit = ctx.import_edit()
    if import_edit is not None:
        edits.append(import_edit)
    return Fix(finding, title, Safety.SAFE, tuple(edits))


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(node is inner for node in ast.walk(outer))


def _enclosing_if(ctx: FixContext, node: ast.expr) -> ast.If | None:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, ast.If) and _contains(ancestor.test, node):
            top = ancestor
            while True:  # climb an elif chain to its first `if`
                parent = ctx.parent(top)
                if isinstance(parent, ast.If) and len(parent.orelse) == 1 and parent.orelse[0] is top:
                    top = parent
                else:
                    return top
        if isinstance(ancestor, ast.stmt):
            return None
    return None


def _require_tensor(ctx: FixContext, node: ast.expr, role: str) -> None:
    kind = ctx.kind(node)
    if kind not in TENSOR_KINDS:
        what = "a Python value" if kind.name in ("PY", "NONE", "PY_SEQ") else "not known to be a tensor"
        raise _decline("not-tensor", f"{role} (`{ctx.code(node)[:40]}`) is {what}; torch.where would turn it into a tensor")


def _describe(ctx: FixContext, node: ast.expr) -> str:
    if not hasattr(node, "lineno"):  # the name itself, standing for its value before the `if`
        return ast.unparse(node)
    return ctx.code(node)[:30]


def _require_same_type(ctx: FixContext, signatures: Signatures, values: list[ast.expr], role: str) -> None:
    sigs = [signatures.of(v) for v in values]
    first = sigs[0]
    for value, sig in zip(values[1:], sigs[1:]):
        if not signatures.equal(first, sig):
            raise _decline(
                "dtype-shape",
                f"cannot prove {role} have the same dtype and shape (`{_describe(ctx, values[0])}` vs "
                f"`{_describe(ctx, value)}`); torch.where would promote or broadcast them",
            )


def _condition_text(ctx: FixContext, test: ast.expr, torch: str) -> str:
    """The tensor condition as a 0-d boolean tensor expression."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return f"{torch}.logical_not({_condition_text(ctx, test.operand, torch)})"
    if isinstance(test, ast.BoolOp):
        function = "logical_and" if isinstance(test.op, ast.And) else "logical_or"
        parts = [_condition_text(ctx, value, torch) for value in test.values]
        result = parts[0]
        for part in parts[1:]:
            result = f"{torch}.{function}({result}, {part})"
        return result
    kind = ctx.kind(test)
    if kind not in TENSOR_KINDS:
        raise _decline("python-condition", f"part of the condition (`{ctx.code(test)[:40]}`) is a Python value mixed into tensor logic")
    if kind not in SCALAR_KINDS:
        raise _decline(
            "condition-not-scalar",
            f"the condition `{ctx.code(test)[:40]}` is not known to be a single value (a reduction such as .any() or .sum())",
        )
    return ctx.argument(test) if kind in BOOL_KINDS else f"{ctx.atom(test)} != 0"


def _restricted_calls(ctx: FixContext, value: ast.expr) -> list[tuple[ast.expr, str]]:
    """(argument, safe value) for each function in `value` undefined on part of its domain,
    including division by a tensor."""
    found: list[tuple[ast.expr, str]] = []
    for node in ast.walk(value):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and ctx.kind(node.right) in TENSOR_KINDS:
            found.append((node.right, "1"))
            continue
        if not isinstance(node, ast.Call):
            continue
        name = ctx.qualname(node.func)
        if name is not None:
            leaf = name.rsplit(".", 1)[1]
            if leaf in RESTRICTED and node.args:
                found.append((node.args[0], RESTRICTED[leaf]))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in RESTRICTED:
            found.append((node.func.value, RESTRICTED[node.func.attr]))
    return found


def _mask_restricted(ctx: FixContext, value: ast.expr, torch: str, condition: str, selected: bool) -> str:
    """`sqrt(a)` on the path selected by `condition` -> `sqrt(where(condition, a, 1))`, so the
    unselected path neither produces NaN nor sends NaN gradients into `a` (the "double where").
    Nested ones (`x / sqrt(x)`) are masked at every level, innermost included."""
    restricted = _restricted_calls(ctx, value)
    if not restricted:
        return ctx.argument(value)
    base = ctx.span(value)
    if base.start_line != base.end_line:
        raise _decline("multiline-restricted", "a branch value that needs masking spans several lines")
    safe_values = {id(argument): safe for argument, safe in restricted}

    def masked(argument: ast.expr, safe: str) -> str:
        inner = render(argument)
        return f"{torch}.where({condition}, {inner}, {safe})" if selected else f"{torch}.where({condition}, {safe}, {inner})"

    def render(node: ast.expr) -> str:
        text = ctx.code(node)
        origin = ctx.span(node).start_col
        for argument, safe in sorted(_outermost(node, safe_values), key=lambda item: item[0].col_offset, reverse=True):
            span = ctx.span(argument)
            start, end = span.start_col - origin, span.end_col - origin
            text = text[:start] + masked(argument, safe) + text[end:]
        return text

    return render(value)


def _outermost(node: ast.AST, targets: dict[int, str]) -> list[tuple[ast.expr, str]]:
    """The nodes of `targets` under `node` that are not under another one of them."""
    found: list[tuple[ast.expr, str]] = []
    for child in ast.iter_child_nodes(node):
        if id(child) in targets:
            found.append((child, targets[id(child)]))  # type: ignore[arg-type]
        else:
            found.extend(_outermost(child, targets))
    return found


def _check_condition_pure(ctx: FixContext, test: ast.expr, role: str) -> None:
    """A condition rewritten with logical_and/or/not: its leaves must be safe to evaluate."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            _check_condition_pure(ctx, value, role)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _check_condition_pure(ctx, test.operand, role)
    else:
        check_pure(ctx, test, role)


class _IfRewrite:
    """One `if` statement (with its elif/else chain) and the statements the rewrite replaces."""

    def __init__(self, finding: Finding, ctx: FixContext, function: ast.FunctionDef, statement: ast.If) -> None:
        self.finding = finding
        self.ctx = ctx
        self.function = function
        self.statement = statement
        self.torch = ctx.torch_name()
        self.signatures = Signatures(ctx, floating_names(ctx, function), at=statement)
        self.uses_cond = False

    def build(self) -> Fix:
        ctx = self.ctx
        prefix, tensor_test = self._split_static_prefix(self.statement.test)
        branches = self._branches(tensor_test)
        self.tests = [b.test for b in branches if b.test is not None]
        fallthrough = None
        if self._is_return_form(branches):
            has_else = branches[-1].test is None
            if not has_else:
                follower = self._fallthrough_return()
                branches.append(_Branch(None, [follower]))
                if prefix is None:
                    fallthrough = follower  # replaced too: the where covers both returns
                # with a Python-level prefix (never with an elif: _split_static_prefix declines those)
                # the final return stays for the path where it is false:
                #   if P: return where(T, A, B)
                #   return B
            code = self._return_code(branches)
        else:
            code = self._assignment_code(branches)
        if prefix is not None:
            header = " and ".join(ctx.code(p) for p in prefix)
            code = f"if {header}:\n" + textwrap.indent(code, "    ")
            if self.statement.orelse:
                code += "else:\n" + textwrap.indent(self._block_text(self.statement.orelse), "    ")
        return self._render(code, fallthrough)

    # -- structure ----------------------------------------------------------------------------
    def _split_static_prefix(self, test: ast.expr) -> tuple[list[ast.expr] | None, ast.expr]:
        """`P1 and P2 and T` where the P are Python-level (dynamo knows them): keep them in an if."""
        if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
            return None, test
        values = test.values
        split = 0
        # Keeping leading non-tensor operands in a Python `if` never changes meaning: they are
        # evaluated first and exactly as before (dynamo knows them, or breaks on them as before).
        while split < len(values) and not _tensor_logic(self.ctx, values[split]):
            split += 1
        if split == 0:
            return None, test
        if split == len(values):
            raise _decline("python-condition", "the condition has no tensor part")
        if self.statement.orelse and len(self.statement.orelse) == 1 and isinstance(self.statement.orelse[0], ast.If):
            raise _decline("static-prefix-elif", "an elif chain under a Python-level condition is left as is")
        rest = values[split:]
        if len(rest) == 1:
            return values[:split], rest[0]
        return values[:split], ast.BoolOp(op=ast.And(), values=rest)  # synthetic, only read

    def _branches(self, first_test: ast.expr) -> list[_Branch]:
        branches = [_Branch(first_test, self.statement.body)]
        current = self.statement
        while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
            branches.append(_Branch(current.test, current.body))
        if current.orelse:
            branches.append(_Branch(None, current.orelse))
        return branches

    def _is_return_form(self, branches: list[_Branch]) -> bool:
        returns = [len(b.body) == 1 and isinstance(b.body[0], ast.Return) for b in branches]
        if all(returns):
            return True
        if any(returns):
            raise _decline("mixed-branches", "some branches return and others do not")
        return False

    def _fallthrough_return(self) -> ast.Return:
        parent = self.ctx.parent(self.statement)
        block = next(
            (getattr(parent, f) for f in ("body", "orelse", "finalbody") if any(s is self.statement for s in getattr(parent, f, []) or [])),
            None,
        )
        block = block or []
        index = next((i for i, s in enumerate(block) if s is self.statement), len(block))
        following = block[index + 1] if index + 1 < len(block) else None
        if following is None:
            raise _decline("no-fallthrough", "no return follows the early return in the same block")
        if not isinstance(following, ast.Return) or following.value is None:
            raise _decline("code-after-return", "code runs between the early return and the final return")
        return following

    # -- returns ------------------------------------------------------------------------------
    def _return_code(self, branches: list[_Branch]) -> str:
        values = [b.body[0].value for b in branches]  # type: ignore[attr-defined]
        if any(v is None for v in values):
            raise _decline("bare-return", "a branch returns None")
        if all(isinstance(v, ast.Tuple) for v in values):
            arity = {len(v.elts) for v in values}  # type: ignore[union-attr]
            if len(arity) != 1:
                raise _decline("tuple-arity", "the branches return tuples of different lengths")
            columns = list(zip(*(v.elts for v in values)))  # type: ignore[union-attr]
            parts = [self._select(list(column), f"element {i + 1} of the returned tuple") for i, column in enumerate(columns)]
            return "return " + ", ".join(parts) + "\n"
        if any(isinstance(v, ast.Tuple) for v in values):
            raise _decline("tuple-arity", "some branches return tuples and others do not")
        return f"return {self._select(values, 'the returned values')}\n"

    # -- assignments --------------------------------------------------------------------------
    def _assignment_code(self, branches: list[_Branch]) -> str:
        ctx = self.ctx
        if branches[-1].test is not None:
            branches.append(_Branch(None, []))  # no else: the values before the if
        order: list[str] = []  # names in order of first assignment
        for branch in branches:
            for stmt in branch.body:
                if isinstance(stmt, ast.Pass):
                    continue
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                    raise _decline("statement", f"a branch does more than assign a name (`{ctx.code(stmt).splitlines()[0][:40]}`)")
                name = stmt.targets[0].id
                if name in branch.values:
                    raise _decline("assigned-twice", f"a branch assigns `{name}` twice")
                branch.values[name] = stmt.value
                if name not in order:
                    order.append(name)
        # A name assigned in one branch and read nowhere after the `if` is a temporary: compute it
        # on both paths (it is pure). Every other name gets one `where` over the branches.
        hoisted: list[ast.Assign] = []
        merged: list[str] = []
        for name in order:
            owners = [n for n, b in enumerate(branches) if name in b.values]
            if len(owners) == 1 and not read_after(ctx, self.statement, name):
                hoisted.append(self._hoistable(branches, owners[0], name))
            else:
                merged.append(name)
        for branch in branches:
            assigned: set[str] = set()
            for stmt in branch.body:
                if not isinstance(stmt, ast.Assign):
                    continue
                reads = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
                stale = sorted(reads & assigned & set(merged))
                if stale:
                    raise _decline(
                        "reads-own-assignment",
                        f"a branch reads `{stale[0]}` after assigning it; the value would not be selected yet",
                    )
                assigned.add(stmt.targets[0].id)  # type: ignore[union-attr]
        for name in merged:
            if any(name not in b.values for b in branches) and not defined_before(ctx, self.statement, name):
                raise _decline("undefined-on-a-path", f"`{name}` is assigned on some paths only and is not defined before the `if`")
        if not merged:
            raise _decline("nothing-to-select", "the branches assign nothing that is used afterwards")
        lines = [ctx.code(stmt) for stmt in hoisted]
        selections = [self._select([b.values.get(name) for b in branches], f"the values of `{name}`", name) for name in merged]
        if len(merged) == 1:
            lines.append(f"{merged[0]} = {selections[0]}")
        else:  # evaluate every selection before assigning any (a value may read another target)
            lines.append(f"{', '.join(merged)} = (\n" + "".join(f"    {s},\n" for s in selections) + ")")
        return "\n".join(lines) + "\n"

    def _hoistable(self, branches: list[_Branch], owner: int, name: str) -> ast.Assign:
        """A temporary used only in its own branch can be computed unconditionally."""
        ctx = self.ctx
        branch = branches[owner]
        stmt = next(s for s in branch.body if isinstance(s, ast.Assign) and s.targets[0].id == name)  # type: ignore[union-attr]
        check_pure(ctx, stmt.value, f"`{name} = ...` (now computed on both paths)")
        for number, other in enumerate(branches):
            if number == owner:
                continue
            if any(isinstance(n, ast.Name) and n.id == name for s in other.body for n in ast.walk(s)):
                raise _decline("temporary-clash", f"`{name}` is assigned in one branch and used in another")
            if other.test is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(other.test)):
                raise _decline("temporary-clash", f"`{name}` is assigned in one branch and read by a condition")
        return stmt  # type: ignore[return-value]

    # -- selection ------------------------------------------------------------------------------
    def _select(self, values: list[ast.expr | None], role: str, default_name: str | None = None) -> str:
        """`where(c1, v1, where(c2, v2, v_else))` for the branches' values of one result."""
        ctx = self.ctx
        concrete = [v for v in values if v is not None]
        for value in concrete:
            _require_tensor(ctx, value, role)
            check_pure(ctx, value, f"{role} (computed on every path)")
        for test in self.tests[1:]:
            _check_condition_pure(ctx, test, "an elif condition (evaluated on every path)")
        signature_values = list(concrete)
        if default_name is not None and len(concrete) < len(values):
            signature_values.append(ast.Name(id=default_name, ctx=ast.Load()))
        _require_same_type(ctx, self.signatures, signature_values, role)
        conditions = [_condition_text(ctx, t, self.torch) for t in self.tests]
        if any(_costly(ctx, v) for v in concrete):
            # Both sides of a where always run; a branch with a layer or a matmul is worth torch.cond,
            # which runs only the chosen one (same preconditions; a value returned unchanged is cloned,
            # as cond outputs must not alias its inputs).
            self.uses_cond = True
            texts = [
                (f"{default_name}.clone()" if value is None else f"{ctx.atom(value)}.clone()" if isinstance(value, ast.Name) else ctx.argument(value))
                for value in values
            ]
            result = texts[-1]
            for condition, text in reversed(list(zip(conditions, texts[:-1]))):
                result = cond_call(self.torch, condition, text, result)
            return result
        if len(conditions) > 1 and any(_restricted_calls(ctx, v) for v in concrete):
            raise _decline("restricted-elif", "a branch of an elif chain uses a function undefined on part of its domain")
        texts: list[str] = []
        for position, value in enumerate(values):
            if value is None:
                texts.append(default_name or "None")
            elif len(conditions) == 1:
                texts.append(_mask_restricted(ctx, value, self.torch, conditions[0], selected=position == 0))
            else:
                texts.append(ctx.argument(value))
        result = texts[-1]
        for condition, text in reversed(list(zip(conditions, texts[:-1]))):
            result = where_call(self.torch, condition, text, result)
        return result

    # -- output -------------------------------------------------------------------------------
    def _block_text(self, body: list[ast.stmt]) -> str:
        lines = self.ctx.source.lines
        first, last = body[0].lineno, body[-1].end_lineno or body[-1].lineno
        return textwrap.dedent("\n".join(lines[first - 1 : last])) + "\n"

    def _render(self, code: str, fallthrough: ast.Return | None) -> Fix:
        ctx = self.ctx
        _check_parses(code)
        target = ctx.cst_node(self.function, self.statement, cst.If)
        new_statements = [_flush_blank_lines(stmt) for stmt in cst.parse_module(code).body]
        comments = _comments(target)
        replacements: dict = {}
        if fallthrough is not None:
            follower = ctx.cst_node(self.function, fallthrough, cst.SimpleStatementLine)
            comments += list(follower.leading_lines)
            replacements[follower] = cst.RemovalSentinel.REMOVE
        first = new_statements[0]
        new_statements[0] = first.with_changes(leading_lines=list(target.leading_lines) + comments)
        replacements[target] = cst.FlattenSentinel(new_statements)
        edits = [ctx.rewrite(self.function, replacements)]
        title = COND_TITLE if self.uses_cond else WhereFixer.title
        return _with_import(ctx, self.finding, edits, title)


def _tensor_logic(ctx: FixContext, node: ast.expr) -> bool:
    """A tensor, or `not`/`and`/`or` over one (Python asks for its truth value)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _tensor_logic(ctx, node.operand)
    if isinstance(node, ast.BoolOp):
        return any(_tensor_logic(ctx, value) for value in node.values)
    return ctx.kind(node) in TENSOR_KINDS


def _check_parses(code: str) -> None:
    try:
        ast.parse(code)
    except SyntaxError as exc:  # a bug in the fixer: never write code that does not parse
        raise _decline("generated-code", f"the generated code does not parse ({exc.msg})") from exc


def _flush_blank_lines(statement: cst.CSTNode) -> cst.CSTNode:
    """Blank lines in generated code carry no indentation (no trailing whitespace)."""

    class Flush(cst.CSTTransformer):
        def leave_EmptyLine(self, original: cst.EmptyLine, updated: cst.EmptyLine) -> cst.EmptyLine:
            return updated.with_changes(indent=False) if updated.comment is None else updated

    return statement.visit(Flush())


def _comments(node: cst.CSTNode) -> list[cst.EmptyLine]:
    """Every comment inside `node` (own-line and end-of-line), as lines to keep above the rewrite."""
    found: list[cst.EmptyLine] = []

    class Collector(cst.CSTVisitor):
        def visit_EmptyLine(self, line: cst.EmptyLine) -> None:
            if line.comment is not None:
                found.append(cst.EmptyLine(comment=line.comment))

        def visit_TrailingWhitespace(self, whitespace: cst.TrailingWhitespace) -> None:
            if whitespace.comment is not None:
                found.append(cst.EmptyLine(comment=whitespace.comment))

    node.visit(Collector())
    # leading_lines of the statement itself are kept separately
    own = {id(line.comment) for line in getattr(node, "leading_lines", ()) if line.comment is not None}
    return [line for line in found if id(line.comment) not in own and not re.match(r"#\s*graphmend:", line.comment.value)]
