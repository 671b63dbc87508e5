"""GM309: a random draw whose value is read only in training -> drawn as before in training, and in
eval drawn as an ordered op whose value is dropped.

LayerDrop, as HF's vits (and fairseq-style encoders) write it, draws from NumPy's generator for
every layer, in eval too, and reads the number only when the module trains:

    dropout_probability = np.random.uniform(0, 1)
    skip_the_layer = self.training and (dropout_probability < self.layerdrop)

Dynamo cannot trace NumPy's generator, and the break is in a loop, so the whole encoder runs
eagerly, inference included. Skipping the draw in eval would change NumPy's random state (every
later `np.random` call in the program would see other numbers). So eval still draws, through the
ordered op (`_graphmend_ordered`): dynamo puts the call into the graph, and when the graph runs
the draw happens in program order, once per layer, leaving the same generator state as before
(measured on torch 2.13, eager and inductor). Training draws exactly as before, and keeps its
break: the number is needed there.

    if self.training:
        dropout_probability = np.random.uniform(0, 1)
    else:
        _graphmend_VitsEncoder_forward_draw()

Preconditions, checked here: the draw is the whole value of a statement binding one name, with
constant arguments (the moved call needs no local value), through a module-level import; the
name is bound nowhere else in the function; every read of it is guarded by the same
`<name>.training` (the later operands of `x.training and ...`, of `not x.training or ...`, or the
body of `if x.training ...:`), so in eval no read happens; and the function does not switch the
mode itself (`.train()`, `.eval()`, an assignment to `.training`).
"""

from __future__ import annotations

import ast

import libcst as cst

from ...astwalk import walk
from ...findings import Finding
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from ..ordered_helper import module_edits, site_name, site_origin, site_text
from ..ordered_site import Site, local_names
from ..py_types import Function

# The generators whose draws are state that must advance as before (GM309's catalogue names the
# rest: seeding, shuffling in place, uuid and os.urandom are not draws whose value is dropped).
DRAW_MODULES = ("numpy.random.", "random.")
NOT_DRAWS = frozenset({"numpy.random.seed", "numpy.random.shuffle", "numpy.random.default_rng", "random.seed", "random.shuffle"})
_MODE_SWITCHES = frozenset({"train", "eval"})


def _title(call: str, flag: str) -> str:
    return (
        f"Draw `{call}` only where `{flag}` lets its value be read; otherwise draw it as an ordered op "
        "and drop the value (the same random state afterwards, no graph break when not training)"
    )


class TrainingDrawFixer:
    codes = frozenset({"GM309"})
    safety = Safety.SAFE

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        call = ctx.node_for(finding, (ast.Call,))
        if not isinstance(call, ast.Call):
            raise DeclineError("no-node", "could not find the call in the source")
        qualname = ctx.qualname(call.func) or ""
        if not qualname.startswith(DRAW_MODULES) or qualname in NOT_DRAWS:
            raise DeclineError("not-a-draw", f"`{ctx.excerpt(call)}` is not a draw whose value could be dropped")
        function = ctx.function_of(call)
        statement = ctx.parent(call)
        if function is None or not (
            isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        ):
            raise DeclineError("draw-not-bound", "the draw is not the whole value of a statement binding one name")
        name = statement.targets[0].id
        if _guard_of(ctx, statement) is not None:  # what this fix leaves behind, or training-only code
            raise DeclineError("drawn-only-in-training", "the draw happens only in training, where its value is read")
        _check_constant_arguments(ctx, call)
        _check_module_level_generator(ctx, function, call)
        _check_bound_once(function, name, statement)
        flag = _training_flag_of_reads(ctx, function, name)
        _check_mode_kept(function)
        title = _title(ctx.excerpt(call), flag)
        if ctx.decide_only:
            module_edits(ctx, function, "")
            return Fix(finding, title, Safety.SAFE, ())
        site = site_name(ctx, function, "draw")
        text = f"if {flag}:\n    {ctx.code(statement)}\nelse:\n    {site}()\n"
        target = ctx.cst_node(function, statement, cst.SimpleStatementLine)
        replacement = cst.ensure_type(cst.parse_statement(text), cst.If).with_changes(leading_lines=target.leading_lines)
        moved = site_text(ctx, site, Site(body=ctx.code(call) + "\n"), site_origin(ctx, function))
        edits = [ctx.rewrite(function, {target: replacement}), *module_edits(ctx, function, moved)]
        return Fix(finding, title, Safety.SAFE, tuple(edits))


def _check_constant_arguments(ctx: FixContext, call: ast.Call) -> None:
    """The call moves to module level as it is written: it may read no local value."""
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        if isinstance(argument, ast.Starred) or any(isinstance(n, ast.Name) for n in walk(argument)):
            raise DeclineError("draw-reads-locals", f"`{ctx.excerpt(call)}` is drawn with values that are not constants")


def _check_module_level_generator(ctx: FixContext, function: Function, call: ast.Call) -> None:
    """The moved call names its module through the module's own import (`np`, `random`), which a
    module-level function sees only where no enclosing function binds the name too."""
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in ctx.index.imports or root.id in local_names(ctx, function):
        raise DeclineError("local-generator", f"`{ctx.excerpt(call)}` does not name its generator through a module-level import")


def _check_bound_once(function: ast.AST, name: str, statement: ast.Assign) -> None:
    for node in walk(function):
        binds = isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
        if (binds and node is not statement.targets[0]) or (isinstance(node, ast.arg) and node.arg == name):
            raise DeclineError("draw-name-rebound", f"`{name}` is bound elsewhere in the function too")
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            raise DeclineError("draw-name-rebound", f"`{name}` is not a local of the function")


def _training_flag_of_reads(ctx: FixContext, function: ast.AST, name: str) -> str:
    """The one `x.training` that guards every read of `name`, as text."""
    flags: set[str] = set()
    reads = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    for read in reads:
        flag = _guard_of(ctx, read)
        if flag is None:
            raise DeclineError("draw-read-unguarded", f"`{name}` is read where `self.training` may be false (line {read.lineno})")
        flags.add(flag)
    if len(flags) != 1:
        raise DeclineError("draw-read-unguarded", f"`{name}` is never read" if not flags else f"`{name}` is read under different flags")
    return flags.pop()


def _guard_of(ctx: FixContext, read: ast.AST) -> str | None:
    """The `x.training` that must be true for `read` to be evaluated, or None."""
    child = read
    for parent in ctx.ancestors(read):
        if isinstance(parent, ast.BoolOp):
            position = next(i for i, v in enumerate(parent.values) if v is child)
            for earlier in parent.values[:position]:
                flag = _flag(earlier) if isinstance(parent.op, ast.And) else _negated_flag(earlier)
                if flag is not None:
                    return flag
        if isinstance(parent, ast.If) and any(s is child for s in parent.body):
            test = parent.test.values[0] if isinstance(parent.test, ast.BoolOp) and isinstance(parent.test.op, ast.And) else parent.test
            flag = _flag(test)
            if flag is not None:
                return flag
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return None
        child = parent
    return None


def _flag(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.value, ast.Name):
        return f"{node.value.id}.training"
    return None


def _negated_flag(node: ast.expr) -> str | None:
    return _flag(node.operand) if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) else None


def _check_mode_kept(function: ast.AST) -> None:
    """The flag reads the same at the draw and at the reads: nothing in between switches it."""
    for node in walk(function):
        switch = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MODE_SWITCHES
        store = isinstance(node, ast.Attribute) and node.attr == "training" and not isinstance(node.ctx, ast.Load)
        if switch or store:
            raise DeclineError("mode-switched", "the function switches a module between training and eval")
