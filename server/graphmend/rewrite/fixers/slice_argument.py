"""A slice bound handed to a helper as an entry of a tensor built from one Python int -> the int.

    def gate(a, b, n):                                  def gate(a, b, n):
        x = a + b                                           x = a + b
        return x[:, :n].tanh() * x[:, n:].sigmoid()         return x[:, :n].tanh() * x[:, n:].sigmoid()

    n_tensor = torch.IntTensor([self.hidden])           n_tensor = torch.IntTensor([self.hidden])
    acts = gate(h, g, n_tensor[0])               ->     acts = gate(h, g, _graphmend_int_entry(self.hidden, n_tensor, 0))

The WaveNet gate of WaveGlow, Glow-TTS and VITS (transformers' `fused_add_tanh_sigmoid_multiply`,
called from `VitsWaveNet.forward`) was written for TorchScript, which wanted the channel count as a
tensor. Dynamo cannot slice with a 0-d tensor without its value, so the helper breaks the graph on
every layer. A slice bound is read through `__index__`: a 0-d integer tensor and the Python int it
holds select the same elements, with the same gradients.

Which values give the same bound (decided by the added helper when it runs, a constant test under
dynamo): a Python int (not a bool) that the tensor's dtype holds (int32 for `torch.IntTensor`,
int64 for `torch.LongTensor` and `torch.tensor`). Anything else (a float the tensor truncates, an
int past the dtype, a SymInt) gets the tensor's entry as before.

VITS' gate is under `@torch.jit.script`, whose function takes only a tensor for an unannotated
parameter when it runs eagerly; dynamo runs its Python code instead. For such a helper the int is
passed only while dynamo traces (`torch.compiler.is_compiling()`, a constant there), and eagerly the
tensor's entry as before.

Preconditions, checked here: the bound is a parameter of a module-level function of the file
without decorators (or under `torch.jit.script` alone), never rebound, read only as the start or stop of a slice of something known
to be a tensor, list or tuple; every call of the helper in the file passes it as `name[k]` (a
literal `k`), `name` bound just before the call's statement, on every path, to
`torch.IntTensor([v])`, `torch.LongTensor([v])` or `torch.tensor([v])` with one value and no
other argument; `v` is a name or attribute the calling function does not bind.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import TENSOR_KINDS
from ...astwalk import walk
from ...findings import Finding
from ..compile_checks import INT_ENTRY, call_text, helper_edits
from ..context import FixContext
from ..flow import parameter_names, reaching_definition
from ..model import DeclineError, Fix, Safety
from .slice_bounds import check_read_as_bound

TITLE = (
    "Pass the helper its slice bound as the Python int the one-value tensor was built from "
    "(the same elements; any other value passes the tensor's entry as before)"
)
# the constructors of a one-value integer tensor, and the widest int each holds
_BUILDERS = {"torch.IntTensor": 31, "torch.LongTensor": 63, "torch.tensor": 63}

Function = ast.FunctionDef | ast.AsyncFunctionDef


class SliceBoundArgumentFixer:
    codes = frozenset({"GM205"})
    safety = Safety.SAFE
    narrow = True  # one shape of GM205: a bound that arrives as a parameter

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        subscript = ctx.node_for(finding)
        helper = ctx.function_of(subscript) if subscript is not None else None
        bounds = _parameter_bounds(subscript, helper)
        if helper is None or len(bounds) != 1:
            raise DeclineError("not-a-bound-parameter", "the slice's bound is not a parameter of the function it slices in")
        node = bounds[0]
        scripted = [ctx.qualname(d) for d in helper.decorator_list] == ["torch.jit.script"]
        if helper not in ctx.tree.body or (helper.decorator_list and not scripted):
            raise DeclineError("helper-not-plain", f"`{helper.name}` is not a module-level function without decorators (or under `torch.jit.script` alone), so its callers are not all known")
        _check_only_bounds(ctx, helper, node.id)
        position = [a.arg for a in helper.args.posonlyargs + helper.args.args].index(node.id) if node.id not in {a.arg for a in helper.args.kwonlyargs} else None
        calls = _calls_of(ctx, helper.name)
        if len({id(ctx.function_of(c)) for c in calls}) != len(calls):
            raise DeclineError("bound-not-from-an-int", f"`{helper.name}` is called more than once in one function")
        edits = []
        for call in calls:
            argument = _argument(call, node.id, position)
            caller = ctx.function_of(call)
            if argument is None or caller is None:
                raise DeclineError("bound-not-from-an-int", f"a call of `{helper.name}` does not pass `{node.id}` as an entry of a tensor built from one Python int")
            value, tensor, index, bits = _int_entry(ctx, caller, call, argument, node.id)
            arguments = [ctx.code(value), tensor, index, str(bits)]
            replacement = cst.parse_expression(call_text(INT_ENTRY, *arguments, *(["scripted=True"] if scripted else [])))
            edits.append(ctx.rewrite(caller, {ctx.cst_node(caller, argument, cst.Subscript): replacement}))
        edits += helper_edits(ctx, INT_ENTRY)
        import_edit = ctx.import_edit()
        if import_edit is not None:
            edits.append(import_edit)
        return Fix(finding, TITLE, Safety.SAFE, tuple(edits))


def _parameter_bounds(subscript: ast.AST | None, helper: Function | None) -> list[ast.Name]:
    """The parameters of `helper` that bound a slice of `subscript`, one per name."""
    if not isinstance(subscript, ast.Subscript) or helper is None:
        return []
    index = subscript.slice
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    names = [b for part in parts if isinstance(part, ast.Slice) for b in (part.lower, part.upper) if isinstance(b, ast.Name)]
    parameters = parameter_names(helper)
    unique = {n.id: n for n in names if n.id in parameters}
    return list(unique.values())


def _calls_of(ctx: FixContext, name: str) -> list[ast.Call]:
    """The calls `name(...)` in the file; declines where the name is read any other way (passed,
    aliased): then not every caller is in view."""
    calls: list[ast.Call] = []
    callees: set[int] = set()
    reads: list[ast.Name] = []
    for node in walk(ctx.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            calls.append(node)
            callees.add(id(node.func))
        elif isinstance(node, ast.Name) and node.id == name:
            reads.append(node)
    if not calls or any(id(read) not in callees for read in reads):
        raise DeclineError("helper-not-plain", f"`{name}` is used other than called by name in this file, so its callers are not all known")
    return calls


def _argument(call: ast.Call, name: str, position: int | None) -> ast.Subscript | None:
    """The call's argument for parameter `name`, where it is a subscript (`t[0]`)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    argument = call.args[position] if keyword is None and position is not None and position < len(call.args) else keyword
    return argument if isinstance(argument, ast.Subscript) else None


def _int_entry(ctx: FixContext, caller: Function, call: ast.Call, argument: ast.Subscript, name: str) -> tuple[ast.expr, str, str, int]:
    """(the Python value, the tensor's name, the index, the widest int the tensor holds in bits) of
    `t[k]` with `t = torch.IntTensor([v])`."""
    index = argument.slice
    literal = isinstance(index, ast.Constant) and type(index.value) is int
    if not (isinstance(argument.value, ast.Name) and literal):
        raise DeclineError("bound-not-from-an-int", f"`{ctx.excerpt(argument, 30)}` is not an entry `name[k]` of a tensor built from one Python int")
    tensor = argument.value.id
    built = _built_tensor(ctx, caller, call, tensor)
    value = built.args[0].elts[0]  # type: ignore[attr-defined]
    if not isinstance(value, (ast.Name, ast.Attribute)) or _bound_in(caller, ctx.code(value)):
        raise DeclineError("bound-not-from-an-int", f"`{ctx.excerpt(value, 30)}` is not a name or attribute the calling function leaves as it is")
    if ctx.kind(value) in TENSOR_KINDS:
        raise DeclineError("bound-not-from-an-int", f"`{ctx.excerpt(value, 30)}` is a tensor, not a Python int")
    return value, tensor, ctx.code(index), _BUILDERS[ctx.qualname(built.func) or ""]


def _built_tensor(ctx: FixContext, caller: Function, call: ast.Call, tensor: str) -> ast.Call:
    statement = ctx.statement_of(call)
    value = reaching_definition(ctx, statement, tensor) if statement is not None else None
    one_value = (
        isinstance(value, ast.Call)
        and not value.keywords
        and len(value.args) == 1
        and isinstance(value.args[0], ast.List)
        and len(value.args[0].elts) == 1
        and ctx.qualname(value.func) in _BUILDERS
    )
    if not one_value:
        raise DeclineError("bound-not-from-an-int", f"`{tensor}` is not bound before the call, on every path, to `torch.IntTensor([v])` (or `LongTensor`, `tensor`) alone")
    return value  # type: ignore[return-value]


def _bound_in(function: Function, spelling: str) -> bool:
    """Whether `function` binds `spelling` (a name or `self.attr`) anywhere."""
    for node in walk(function):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
        for target in targets:
            if any(ast.unparse(t) == spelling for t in walk(target)):
                return True
    return False


def _check_only_bounds(ctx: FixContext, helper: Function, name: str) -> None:
    """Every read of `name` in the helper is a slice's start or stop; it is never bound there."""
    for node in walk(helper):
        if isinstance(node, ast.Name) and node.id == name:
            check_read_as_bound(ctx, node, f"in `{helper.name}`")
