"""Keep a rewrite out of a torch 2.13 inductor miscompile: one Python float that can change between
calls, used in one graph both as a tensor operand and as an op's scalar argument.

Dynamo passes such a float (a parameter, an attribute, a global) into the graph as a 0-d tensor
where it meets tensor arithmetic or a comparison (`x > limit`, `x * limit`). An op that needs a
Python scalar (`x.clamp(max=limit)`, `x ** limit`, `x.masked_fill(m, limit)`) makes inductor bake
the value into the kernel and guard on it. When the float changes, the guard fails and the
function is compiled again; inductor's FX graph cache (on by default) then finds the same graph and
returns the kernel with the first value baked in. Measured on torch 2.13.0 CPU:

    torch.compile(lambda x, lim: torch.where(x > lim, x.clamp(max=lim), x))
    # lim = 1.0, 0.0, 2.5 -> the third call returns [0.0, 0.5, 2.0] for x = [3.0, 0.5, 2.0]
    # (eager: [2.5, 0.5, 2.0]); right with TORCHINDUCTOR_FX_GRAPH_CACHE=0 or the aot_eager backend

Code that breaks the graph between the two uses (`if loss > limit: loss = loss.clamp(max=limit)`)
is right, as each graph holds one use. A rewrite that removes that break puts both in one graph, so
it would turn correct code into wrong values that no test of the rewrite's eager meaning sees. The
engine asks this module about every planned fix and declines one that joins the two uses.

Which scalar arguments inductor bakes in was measured op by op (`SCALAR_SLOTS`); a use the table
does not list is taken as harmless. What is a candidate is conservative instead: any name or
attribute the analysis does not know to be a tensor, an int, a bool or a string.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..analysis.kinds import TENSOR_KINDS
from ..astwalk import child_nodes, walk
from ..findings import Edit, Finding
from ..quoting import excerpt
from ..textedits import apply_edits
from .context import FixContext
from .model import DeclineError
from .py_types import BOOL, FLOAT, INT, STR, value_type

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class ScalarSlot:
    """Where an op takes a Python scalar that inductor bakes into its kernel: positional indices in
    the `torch.op(x, ...)` form, in the `x.op(...)` form, and keyword names."""

    function: tuple[int, ...] = ()
    method: tuple[int, ...] = ()
    keywords: tuple[str, ...] = ()


_CLAMP = ScalarSlot(function=(1, 2), method=(0, 1), keywords=("min", "max"))
_ONE = ScalarSlot(function=(1,), method=(0,), keywords=("min", "max", "other", "exponent"))
_MASKED_FILL = ScalarSlot(function=(2,), method=(1,), keywords=("value",))
_ALPHA = ScalarSlot(keywords=("alpha",))
_VALUE = ScalarSlot(keywords=("value",))
_LERP = ScalarSlot(function=(2,), method=(1,), keywords=("weight",))

# Measured on torch 2.13.0 (each in a graph with `x > lim` or `x * lim`, lim = 1.0, 0.0, 2.5, 0.25):
# these came out wrong. Measured right, so not listed: leaky_relu's slope, threshold, elu's alpha,
# softplus's beta, nan_to_num, dropout's p, round's decimals, and `/`, `*`, `+`, `-` of a tensor.
SCALAR_SLOTS: dict[str, ScalarSlot] = {
    **dict.fromkeys(("clamp", "clamp_", "clip", "clip_"), _CLAMP),
    **dict.fromkeys(("clamp_min", "clamp_min_", "clamp_max", "clamp_max_"), _ONE),
    **dict.fromkeys(("masked_fill", "masked_fill_"), _MASKED_FILL),
    "full": ScalarSlot(function=(1,), keywords=("fill_value",)),
    "full_like": ScalarSlot(function=(1,), keywords=("fill_value",)),
    "new_full": ScalarSlot(method=(1,), keywords=("fill_value",)),
    "fill_": ScalarSlot(method=(0,), keywords=("value",)),
    **dict.fromkeys(("pow", "pow_", "remainder", "remainder_", "fmod", "fmod_"), _ONE),
    **dict.fromkeys(("add", "add_", "sub", "sub_"), _ALPHA),
    **dict.fromkeys(("addcmul", "addcmul_", "addcdiv", "addcdiv_"), _VALUE),
    **dict.fromkeys(("lerp", "lerp_"), _LERP),
    "where": ScalarSlot(function=(1, 2), method=(1,), keywords=("other",)),
    **dict.fromkeys(("hardtanh", "hardtanh_"), ScalarSlot(function=(1, 2), keywords=("min_val", "max_val"))),
}
# `x.div(lim, rounding_mode=...)`: only with a rounding mode (a plain division is right)
_ROUNDING_DIVISIONS = frozenset({"div", "div_", "divide", "true_divide"})
# Operators whose right operand is baked in like those slots (`x ** lim`, `x % lim`, `x // lim`)
_BAKED_OPERATORS = (ast.Pow, ast.Mod, ast.FloorDiv)
# `torch.clamp(x, ...)`, `F.hardtanh(x, ...)`: the function form, whose first argument is the tensor
_FUNCTION_OWNERS = frozenset({"torch", "F", "nn.functional", "torch.nn.functional", "functional"})

TENSOR_USE, SCALAR_USE = "tensor operand", "scalar argument"
# Text without any of these holds no scalar argument of the table: the parse and walk are skipped.
_MAY_BAKE = re.compile(
    r"\b(?:" + "|".join(sorted(set(SCALAR_SLOTS) | _ROUNDING_DIVISIONS)) + r")\s*\(|\*\*|%|//"
)


@dataclass(frozen=True)
class Use:
    root: str  # the float's spelling: `limit`, `self.limit`
    kind: str  # TENSOR_USE or SCALAR_USE
    line: int  # in the rewritten function's text
    operation: ast.AST  # quoted in the reason (only a decline needs its text)

    @property
    def excerpt(self) -> str:
        return excerpt(ast.unparse(self.operation), 50)


def check_fix(finding: Finding, edits: tuple[Edit, ...], ctx: FixContext) -> None:
    """Raise DeclineError where the fix puts a changing float into one graph both as a tensor
    operand and as a baked scalar argument, with the original's graph break between them."""
    node = ctx.node_for(finding)
    function = ctx.function_of(node) if node is not None else None
    if function is None:
        return
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    last = function.end_lineno or function.lineno
    inside = [e for e in edits if first <= e.span.start_line and e.span.end_line <= last + 1]
    if not inside:
        return
    rewritten = _rewritten_function(ctx, first, max([last] + [e.span.end_line for e in inside]), inside)
    if rewritten is None:
        return
    tree, regions = rewritten
    candidates = _Candidates(ctx, function)
    uses = list(_uses(tree, candidates.known_tensor))
    specialised: frozenset[str] | None = None
    for tensor_use in (u for u in uses if u.kind == TENSOR_USE):
        for scalar_use in (u for u in uses if u.kind == SCALAR_USE and u.root == tensor_use.root):
            if not any(_joined(tensor_use.line, scalar_use.line, region) for region in regions):
                continue
            root = tensor_use.root  # asked last: what it holds costs the most to learn
            if not candidates.may_be_float(root):
                continue
            specialised = _passed_to_an_op(tree) if specialised is None else specialised
            if root in specialised and candidates.known_float(root):
                continue
            raise DeclineError(
                "inductor-float-specialisation",
                f"joining `{tensor_use.excerpt}` and `{scalar_use.excerpt}` in one graph would meet a torch 2.13 "
                f"inductor bug: when the Python float `{root}` changes between calls, inductor's FX graph "
                "cache reuses a kernel with its first value baked in (the graph break keeps them apart now)",
            )


def _joined(a: int, b: int, region: tuple[int, int]) -> bool:
    """Whether the edited `region` (lines of the rewritten function) had the break between the
    uses at lines `a` and `b`: one of them is in it, or it lies between them."""
    start, end = region
    low, high = min(a, b), max(a, b)
    return start <= low <= end or start <= high <= end or (low < start and end < high)


def _rewritten_function(ctx: FixContext, first: int, last: int, edits: list[Edit]) -> tuple[ast.Module, list[tuple[int, int]]] | None:
    """The function's text with the edits applied, parsed (under an `if True:` so an indented
    method parses), and each edit's lines in that text (1-based, the header line not counted)."""
    regions = []
    shift = 0  # lines added by the edits above
    for edit in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col)):
        start = edit.span.start_line - first + 1 + shift
        regions.append((start, start + edit.new_text.count("\n")))
        shift += edit.new_text.count("\n") - (edit.span.end_line - edit.span.start_line)
    lines = apply_edits(ctx.text, edits).split("\n")[first - 1 : last + shift]  # the lines above stay
    text = "\n".join(lines)
    if _MAY_BAKE.search(text) is None:
        return None  # no scalar argument inductor bakes in: nothing to join (most fixes; `check` plans many)
    indented = bool(lines) and lines[0][:1].isspace()
    try:
        tree = ast.parse(f"if True:\n{text}" if indented else text)
    except SyntaxError:
        return None  # the engine rejects code that does not parse on its own
    if indented:
        regions = [(start + 1, end + 1) for start, end in regions]
    return tree, regions


class _Candidates:
    """Which spellings may hold a Python float that changes between calls: not a literal, not a
    tensor, int, bool or string the analysis knows of, not a module constant bound once."""

    def __init__(self, ctx: FixContext, function: Function) -> None:
        self.ctx = ctx
        self.function = function
        self.original: dict[str, list[ast.expr]] = {}
        for node in walk(function):
            if isinstance(node, (ast.Name, ast.Attribute)) and (spelling := _spelling(node)) is not None:
                self.original.setdefault(spelling, []).append(node)
        self.constants = ctx.remember(("module-constants",), lambda: _module_constants(ctx.tree))
        self._floats: dict[str, bool] = {}

    def known_tensor(self, spelling: str) -> bool:
        """A name or attribute the analysis knows holds a tensor where the function reads it."""
        return any(self.ctx.kind(node) in TENSOR_KINDS for node in self.original.get(spelling, []))

    def known_float(self, spelling: str) -> bool:
        nodes = self.original.get(spelling, [])
        return bool(nodes) and value_type(self.ctx, nodes[0], self.function) == FLOAT

    def may_be_float(self, root: str) -> bool:
        if root not in self._floats:
            self._floats[root] = self._may_be_float(root)
        return self._floats[root]

    def _may_be_float(self, root: str) -> bool:
        if root.startswith("_graphmend") or root in self.constants:
            return False
        nodes = self.original.get(root, [])
        if self.known_tensor(root):
            return False
        return not nodes or value_type(self.ctx, nodes[0], self.function) not in (INT, BOOL, STR)


def _passed_to_an_op(tree: ast.Module) -> frozenset[str]:
    """Spellings passed as they are to a GraphMend op (`_graphmend_..._log(cond, y, limit)`): a
    custom op's `float` argument makes dynamo specialise the float for the whole frame, so every
    use of it is a baked constant and the cache keys on it (measured right, OrderedEffectFixer's
    python_prefix fixture with `limit` = 3.0, 1.0, 2.5, 0.25)."""
    return frozenset(
        spelling
        for node in walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("_graphmend")
        for argument in node.args
        if (spelling := _spelling(argument)) is not None
    )


def _module_constants(tree: ast.Module) -> frozenset[str]:
    """Module names bound once, to a literal (`EPS = 1e-6`): dynamo bakes in a value that stays."""
    bound: dict[str, int] = {}
    literal: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = bound.get(target.id, 0) + 1
                    if isinstance(statement.value, ast.Constant):
                        literal.add(target.id)
    globals_ = {name for node in walk(tree) if isinstance(node, ast.Global) for name in node.names}
    return frozenset(name for name, count in bound.items() if count == 1 and name in literal and name not in globals_)


def _spelling(node: ast.AST) -> str | None:
    """`limit`, `self.limit`, `self.config.limit`; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _spelling(node.value)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None


def _uses(tree: ast.Module, known_tensor: Callable[[str], bool]) -> Iterator[Use]:
    """Each use of a name or attribute chain as a tensor operand or a baked scalar argument; Python
    arithmetic of it (`limit * 2`, a local bound to one) counts as a use of it. An operator makes
    a tensor use only with an operand that holds a tensor (`known_tensor` names one; a torch call
    or a method call on one makes one): `self.heads // self.groups` is Python arithmetic. A local
    is an alias only of arithmetic of no known tensor (`bound = limit * 2`, not
    `y = x * 0.5 + limit` with a tensor `x`)."""
    parents = {id(child): parent for parent in walk(tree) for child in child_nodes(parent)}
    aliases: dict[str, frozenset[str]] = {}
    for node in walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            roots = _arithmetic_roots(node.value, aliases)
            if roots and not any(known_tensor(root) for root in roots):
                aliases[node.targets[0].id] = roots
    tensors = _Tensors(known_tensor)
    for node in walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)) or isinstance(parents.get(id(node)), ast.Attribute):
            continue  # `self.limit` once, not `self` again
        spelling = _spelling(node)
        if spelling is None or not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        expr: ast.AST = node
        while isinstance(parent := parents.get(id(expr)), (ast.BinOp, ast.UnaryOp)) and not tensors.meets_one(parent, expr):
            expr = parent
        kind, where = _use_kind(expr, parents.get(id(expr)), parents, tensors)
        if kind is not None:
            for root in aliases.get(spelling, frozenset({spelling})):
                yield Use(root, kind, node.lineno, where)


class _Tensors:
    """Which operands hold a tensor: a name `known_tensor` vouches for, a `torch.*` call, a method
    call on such an operand (`x.sum()`), an index of one, arithmetic with one."""

    def __init__(self, known_tensor: Callable[[str], bool]) -> None:
        self.known_tensor = known_tensor

    def holds_one(self, expr: ast.AST) -> bool:
        if isinstance(expr, (ast.Name, ast.Attribute)):
            spelling = _spelling(expr)
            if spelling is not None:
                return self.known_tensor(spelling)
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute):
                return _spelling(func.value) in _FUNCTION_OWNERS or self.holds_one(func.value)
            return False
        if isinstance(expr, ast.Attribute):
            return self.holds_one(expr.value)
        if isinstance(expr, ast.Subscript):
            return self.holds_one(expr.value)
        if isinstance(expr, ast.UnaryOp):
            return self.holds_one(expr.operand)
        if isinstance(expr, ast.BinOp):
            return self.holds_one(expr.left) or self.holds_one(expr.right)
        return False

    def meets_one(self, parent: ast.AST, child: ast.AST) -> bool:
        """Whether operator `parent` computes `child` with a tensor (`x * limit`), not in Python
        only (`limit * 2`, `-limit`)."""
        if isinstance(parent, ast.UnaryOp):
            return False
        assert isinstance(parent, ast.BinOp)
        return self.holds_one(parent.right if parent.left is child else parent.left)


def _use_kind(expr: ast.AST, parent: ast.AST | None, parents: dict[int, ast.AST], tensors: _Tensors) -> tuple[str | None, ast.AST]:
    """How `expr` (a float, or Python arithmetic of it) is used by `parent`, and the operation."""
    if isinstance(parent, ast.BinOp):  # with a tensor: the climb stopped there
        if isinstance(parent.op, _BAKED_OPERATORS) and parent.right is expr:
            return SCALAR_USE, parent
        return TENSOR_USE, parent
    if isinstance(parent, ast.Compare):
        others = [o for o in (parent.left, *parent.comparators) if o is not expr]
        return (TENSOR_USE if any(tensors.holds_one(o) for o in others) else None), parent
    if isinstance(parent, ast.keyword):
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and _baked_keyword(call, parent.arg):
            return SCALAR_USE, call
        return None, parent
    if isinstance(parent, ast.Call) and any(a is expr for a in parent.args):
        index = next(i for i, a in enumerate(parent.args) if a is expr)
        return (SCALAR_USE if _baked_position(parent, index) else None), parent
    return None, expr


def _baked_keyword(call: ast.Call, name: str | None) -> bool:
    op = _op_name(call)
    if op is None or name is None:
        return False
    if op in _ROUNDING_DIVISIONS:
        return name == "other" and any(k.arg == "rounding_mode" for k in call.keywords)
    slot = SCALAR_SLOTS.get(op)
    return slot is not None and name in slot.keywords


def _baked_position(call: ast.Call, index: int) -> bool:
    op = _op_name(call)
    if op is None:
        return False
    function_form = _is_function_form(call)
    if op in _ROUNDING_DIVISIONS:
        return index == (1 if function_form else 0) and any(k.arg == "rounding_mode" for k in call.keywords)
    slot = SCALAR_SLOTS.get(op)
    if slot is None:
        return False
    return index in (slot.function if function_form else slot.method)


def _op_name(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _is_function_form(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and _spelling(call.func.value) in _FUNCTION_OWNERS


def _arithmetic_roots(expr: ast.AST, aliases: dict[str, frozenset[str]]) -> frozenset[str] | None:
    """The names an arithmetic expression of names and literals reads (`limit * 2` -> {limit}),
    through earlier such aliases; None where it holds anything else (a call, a subscript)."""
    if isinstance(expr, ast.Constant):
        return frozenset() if isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) else None
    if isinstance(expr, (ast.Name, ast.Attribute)):
        spelling = _spelling(expr)
        return None if spelling is None else aliases.get(spelling, frozenset({spelling}))
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _arithmetic_roots(expr.operand, aliases)
    if isinstance(expr, ast.BinOp):
        left, right = _arithmetic_roots(expr.left, aliases), _arithmetic_roots(expr.right, aliases)
        return None if left is None or right is None else left | right
    return None
