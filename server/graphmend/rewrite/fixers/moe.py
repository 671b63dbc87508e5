"""Mixture-of-experts dispatch -> a loop over every expert that dynamo traces (issues 8 and 15).

The dispatch loop copied across transformers' MoE families gathers each expert's tokens with
`torch.where(expert_mask[e])`, whose output size depends on the routing, and often loops only over
the experts hit (`.nonzero()`, `.tolist()`): dynamo breaks on the data-dependent shapes, and
inside a loop it runs the whole function eagerly.

    expert_mask = one_hot(selected, num_classes=N).permute(2, 1, 0)     # (experts, top_k, tokens)
    hit = (expert_mask.sum(dim=(-1, -2)) > 0).nonzero(as_tuple=True)[0].tolist()
    for e in hit:
        slot, token = torch.where(expert_mask[e])
        out = self.experts[e](x[None, token].reshape(-1, d)) * weights[token, slot, None]
        final.index_add_(0, token, out.to(x.dtype))

becomes a loop over all experts where `token` is every token, `slot` the slot that routed it (any
slot for a token the expert does not serve) and the accumulation masks the rows not routed:

    for e in range(expert_mask.shape[0]):
        token = torch.arange(expert_mask.shape[-1], device=expert_mask.device)
        slot = expert_mask[e].argmax(dim=0)
        token_routed = expert_mask[e].any(dim=0)
        out = ...  # unchanged
        final.index_add_(0, token, torch.where(token_routed[:, None], out.to(x.dtype), 0))

The rows of routed tokens get the same values, added in the same expert order (a masked row adds
an exact zero, and `where` keeps a NaN or infinity of an unrouted row out), so the results match
to rounding (a matmul over all rows may round differently from one over a subset).

It rests on what MoE dispatch code assumes and this fixer cannot prove: an expert maps each token
independently (an MLP, not attention across tokens), and a token routes to an expert at most once
(top-k indices are distinct). It costs compute: every expert runs on every token, num_experts /
top_k times the expert work (measured in bench/moe_cost.py: 6x slower at 64 experts, top-8). So
the fix is `costly` and its title says both.

The sparse form (`SparseMoEDispatchFixer`, unsafe) keeps the original's gathers and cost: it
only loops over every expert instead of the experts hit (an expert without tokens gathers none
and adds nothing), and sets `torch._dynamo.config.capture_dynamic_output_shape_ops = True` in
the module so dynamo traces `torch.where(mask[e])` with an unbacked size instead of breaking.
The values are the original's, bit for bit; the flag is process-wide, hence unsafe. Preferred
over the dense form at the unsafe level: the dense form's cost grows with the expert count.
"""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.kinds import BOOL_KINDS, Kind
from ...analysis.symbols import SHAPE_FLAG
from ...astwalk import walk
from ...findings import Edit, Finding
from ...quoting import excerpt
from ..config_flags import flag_edit, module_flag_value
from ..context import FixContext
from ..model import DeclineError, Fix, Safety
from .generated import fresh_name

TITLE = (
    "Dispatch to every expert with fixed shapes: each expert runs on all tokens and unrouted rows are masked "
    "(num_experts/top_k times the expert FLOPs; same values up to rounding, assuming experts treat tokens independently)"
)
SPARSE_TITLE = (
    "Loop over every expert, each still gathering only its own tokens, with "
    "torch._dynamo.config.capture_dynamic_output_shape_ops = True set in this module (changes dynamo's behaviour "
    "for the whole process; the original's values and expert compute)"
)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _assignments(function: ast.AST, name: str) -> list[ast.Assign]:
    """The `name = ...` statements of the function, in source order."""
    return [
        n for n in walk(function)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
    ]


def _loops_over_assigned(ctx: FixContext, function: ast.AST, node: ast.AST) -> list[ast.For]:
    """The later `for` loops over the name the node's statement assigns (`hit = ...; for e in hit:`)."""
    statement = ctx.statement_of(node)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
        return []
    hit = statement.targets[0].id
    return [
        n for n in walk(function)
        if isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id == hit and n.lineno > statement.lineno
    ]


class MoEDispatchFixer:
    narrow = True  # one shape of its codes (an expert dispatch): its "not my pattern" says least
    """Anchored on any finding inside the dispatch loop or on the list of experts hit."""

    codes = frozenset({"GM401", "GM202", "GM206", "GM101"})
    safety = Safety.COSTLY

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        if node is None:
            raise DeclineError("no-node", "could not find the code in the source")
        function = ctx.function_of(node)
        if function is None:
            raise DeclineError("not-in-function", "the code is not inside a function")
        loop, gather = self._dispatch_loop(ctx, function, node)
        if finding.code == "GM101" and isinstance(loop.target, ast.Name) and loop.target.id not in _names(node):
            # an `if` in the loop about something else: rewriting the dispatch would not remove it
            raise DeclineError("moe-no-dispatch", "the condition does not test the expert; it is not part of the dispatch")
        return self._rewrite(ctx, function, loop, gather).fix(finding)

    def _rewrite(self, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For, gather: ast.Assign) -> _Rewrite:
        return _Rewrite(ctx, function, loop, gather)

    def _dispatch_loop(self, ctx: FixContext, function: ast.AST, node: ast.AST) -> tuple[ast.For, ast.Assign]:
        """The `for` loop whose body gathers tokens with `torch.where(mask[e])`: one around the
        finding, or one iterating over the value the finding's statement assigns."""
        for ancestor in ctx.ancestors(node):
            if ancestor is function:
                break
            if isinstance(ancestor, ast.For):
                gather = _gather_statement(ctx, ancestor)
                if gather is not None:
                    return ancestor, gather
        for loop in _loops_over_assigned(ctx, function, node):
            gather = _gather_statement(ctx, loop)
            if gather is not None:
                return loop, gather
        raise DeclineError("moe-no-dispatch", "not part of an expert dispatch loop (`for e in ...:` gathering tokens with `torch.where(mask[e])`)")


class SparseMoEDispatchFixer(MoEDispatchFixer):
    """The same dispatch loop, over every expert but with the original gathers (see the module's
    docstring); anchored on the same findings."""

    safety = Safety.UNSAFE

    def _rewrite(self, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For, gather: ast.Assign) -> _Rewrite:
        return _SparseRewrite(ctx, function, loop, gather)


def _gather_statement(ctx: FixContext, loop: ast.For) -> ast.Assign | None:
    """`slot, token = torch.where(mask[e])` (or `mask[e].squeeze(0)`) among the loop's statements."""
    if not isinstance(loop.target, ast.Name):
        return None
    for statement in loop.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)):
            continue
        if not (isinstance(value, ast.Call) and ctx.qualname(value.func) == "torch.where" and len(value.args) == 1 and not value.keywords):
            continue
        if _mask_of(value.args[0], loop.target.id) is not None:
            return statement
    return None


def _mask_of(argument: ast.expr, expert: str) -> str | None:
    """`mask[e]` or `mask[e].squeeze(0)` -> "mask" (the gather is rewritten without the squeeze)."""
    if (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Attribute)
        and argument.func.attr == "squeeze"
        and len(argument.args) == 1
        and isinstance(argument.args[0], ast.Constant)
        and argument.args[0].value == 0
    ):
        argument = argument.func.value
    if (
        isinstance(argument, ast.Subscript)
        and isinstance(argument.value, ast.Name)
        and isinstance(argument.slice, ast.Name)
        and argument.slice.id == expert
    ):
        return argument.value.id
    return None


class _Edits:
    """The node replacements of one function, collected while the preconditions are checked and
    applied as one libcst rewrite at the end."""

    def __init__(self, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.ctx, self.function = ctx, function
        self.replacements: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel] = {}

    def replace(self, node: ast.AST, replacement: cst.CSTNode, kind: type) -> None:
        self.replacements[self.ctx.cst_node(self.function, node, kind)] = replacement

    def replace_statement(self, statement: ast.stmt, replacement: list[str] | None) -> None:
        """Remove a statement (`pass` when it is alone in its block) or put statements in its place."""
        kind: type[cst.If | cst.SimpleStatementLine] = cst.If if isinstance(statement, ast.If) else cst.SimpleStatementLine
        target = self.ctx.cst_node(self.function, statement, kind)
        if replacement:
            parsed = [cst.parse_statement(text + "\n") for text in replacement]
            parsed[0] = parsed[0].with_changes(leading_lines=target.leading_lines)
            self.replacements[target] = cst.FlattenSentinel(parsed)
            return
        parent = self.ctx.parent(statement)
        block: list[ast.stmt] = next((getattr(parent, f) for f in ("body", "orelse", "finalbody") if statement in (getattr(parent, f, None) or [])), [])
        self.replacements[target] = (
            cst.parse_statement("pass\n").with_changes(leading_lines=target.leading_lines) if len(block) == 1 else cst.RemovalSentinel.REMOVE
        )

    def edit(self) -> Edit:
        return self.ctx.rewrite(self.function, self.replacements)


class _Rewrite:
    """Checks the dispatch loop's preconditions and builds the replacement nodes."""

    def __init__(self, ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For, gather: ast.Assign) -> None:
        self.ctx, self.function, self.loop, self.gather = ctx, function, loop, gather
        assert isinstance(loop.target, ast.Name) and isinstance(gather.targets[0], ast.Tuple)
        self.expert = loop.target.id
        slot, token = gather.targets[0].elts
        self.slot, self.token = slot.id, token.id  # type: ignore[attr-defined]
        mask = _mask_of(gather.value.args[0], self.expert)  # type: ignore[attr-defined]
        assert mask is not None
        self.mask = mask
        self.rows = False  # the loop iterates over `.nonzero()` rows (1-element tensors)
        self.edits = _Edits(ctx, function)

    def fix(self, finding: Finding) -> Fix:
        self._check_mask()
        self._check_loop_iterable()
        indices = self._aliases()
        accumulation = self._check_index_uses(indices)
        self._replace_gather()
        self._mask_accumulation(accumulation)
        return Fix(finding, TITLE, Safety.COSTLY, (self.edits.edit(),))

    # -- preconditions ------------------------------------------------------------------------

    def _check_mask(self) -> None:
        """The mask is `one_hot(selected, ...).permute(2, 1, 0)`: (experts, top_k, tokens), 0/1."""
        assigned = [a for a in _assignments(self.function, self.mask) if a.lineno < self.loop.lineno]
        if not assigned:
            raise DeclineError("moe-mask-origin", f"`{self.mask}` is not assigned before the loop: cannot tell it is a one-hot expert mask")
        value = assigned[-1].value
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "permute"
            and [a.value for a in value.args if isinstance(a, ast.Constant)] == [2, 1, 0]
            and len(value.args) == 3
        ):
            raise DeclineError("moe-mask-origin", f"`{self.mask}` is not `one_hot(...).permute(2, 1, 0)`: cannot tell its layout (experts, top_k, tokens)")
        source = value.func.value
        if isinstance(source, ast.Name):  # expert_mask = one_hot(...); expert_mask = expert_mask.permute(2, 1, 0)
            earlier = [a for a in _assignments(self.function, source.id) if a.lineno < assigned[-1].lineno]
            source = earlier[-1].value if earlier else source
        if not (isinstance(source, ast.Call) and (self.ctx.qualname(source.func) or "").endswith("functional.one_hot")):
            raise DeclineError("moe-mask-origin", f"`{self.mask}` is not built by `one_hot`: it may not be a 0/1 mask with one slot per token")
        for store in _assignments(self.function, self.mask):
            if store.lineno > assigned[-1].lineno and store.lineno <= (self.loop.end_lineno or self.loop.lineno):
                raise DeclineError("moe-mask-origin", f"`{self.mask}` is reassigned inside the loop")

    def _check_loop_iterable(self) -> None:
        """`range(...)` stays; a list or tensor of the experts hit becomes `range(mask.shape[0])`."""
        iterable = self.loop.iter
        if isinstance(iterable, ast.Call) and self.ctx.qualname(iterable.func) == "builtins.range":
            return
        if not isinstance(iterable, ast.Name):
            raise DeclineError("moe-loop-iterable", f"the loop runs over `{self.ctx.excerpt(iterable, 40)}`, neither `range(...)` nor a list of the experts hit")
        stores = _assignments(self.function, iterable.id)
        if len(stores) != 1 or len(stores[0].targets) != 1 or stores[0].lineno > self.loop.lineno:
            raise DeclineError("moe-loop-iterable", f"`{iterable.id}` is assigned more than once: cannot tell it lists the experts hit")
        hit = stores[0]
        code = self.ctx.code(hit.value)
        if ".nonzero(" not in code or self.mask not in _names(hit.value):
            raise DeclineError("moe-loop-iterable", f"`{iterable.id}` is not the nonzero experts of `{self.mask}`")
        other_uses = [
            n for n in walk(self.function)
            if isinstance(n, ast.Name) and n.id == iterable.id and isinstance(n.ctx, ast.Load) and n is not iterable
        ]
        if other_uses:
            raise DeclineError("moe-hit-used", f"`{iterable.id}` (the experts hit) is used elsewhere; it would still break")
        self.rows = code.rstrip().endswith(".nonzero()")  # nonzero() yields 1-element rows, not ints
        if self.rows:
            self._plan_row_iteration()
        elif not code.rstrip().endswith(".tolist()"):
            raise DeclineError("moe-loop-iterable", f"cannot tell what `{iterable.id}` yields (expected `.nonzero()` rows or `.tolist()` ints)")
        self.edits.replace_statement(hit, None)
        self.edits.replace(iterable, cst.parse_expression(f"range({self.mask}.shape[0])"), cst.Name)

    def _plan_row_iteration(self) -> None:
        """Experts as 1-element tensors become ints: `e = e[0]` goes, `mask[e].squeeze(0)` loses
        the squeeze; any other use of `e` must not depend on it being a tensor."""
        uses = [n for n in walk(self.loop) if isinstance(n, ast.Name) and n.id == self.expert and n is not self.loop.target]
        first = self.loop.body[0]
        unwraps = (
            isinstance(first, ast.Assign)
            and len(first.targets) == 1
            and isinstance(first.targets[0], ast.Name)
            and first.targets[0].id == self.expert
            and isinstance(first.value, ast.Subscript)
            and isinstance(first.value.value, ast.Name)
            and first.value.value.id == self.expert
            and isinstance(first.value.slice, ast.Constant)
            and first.value.slice.value == 0
        )
        if unwraps:
            self.edits.replace_statement(first, None)
            return
        for use in uses:
            parent = self.ctx.parent(use)
            if any(a is self.gather for a in self.ctx.ancestors(use)):
                continue  # the gather is rewritten as `mask[e]` (no squeeze) anyway
            if isinstance(parent, ast.Subscript) and parent.slice is use and self.ctx.kind(parent.value) is Kind.MODULES:
                continue  # self.experts[e]: a ModuleList takes an int as it takes a 1-element tensor
            raise DeclineError("moe-expert-tensor", f"the expert `{self.expert}` is used as a tensor (`{self.ctx.excerpt(parent or use, 40)}`); as an int it could change")

    def _aliases(self) -> set[str]:
        """The two index names and plain copies of them (`token_list = token_idx`)."""
        names = {self.slot, self.token}
        for statement in self.loop.body:
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Name)
                and statement.value.id in names
            ):
                names.add(statement.targets[0].id)
        return names

    def _check_index_uses(self, indices: set[str]) -> ast.Call:
        """Every use of the indices gathers rows (`x[token]`, `w[token, slot, None]`), is the row
        index of the one `index_add_`, or skips an empty expert (dropped: it adds nothing)."""
        accumulation: ast.Call | None = None
        for node in walk(self.function):
            if not (isinstance(node, ast.Name) and node.id in indices and isinstance(node.ctx, ast.Load)):
                continue
            if not self._inside_loop(node):
                raise DeclineError("moe-index-use", f"`{node.id}` is used after the loop, where it would hold every token")
            parent = self.ctx.parent(node)
            if isinstance(parent, ast.Assign) and parent.value is node and parent in self.loop.body:
                continue  # an alias
            if isinstance(parent, ast.Subscript) and parent.slice is node:
                continue
            if isinstance(parent, ast.Tuple) and isinstance(self.ctx.parent(parent), ast.Subscript) and self.ctx.parent(parent).slice is parent:  # type: ignore[union-attr]
                continue
            call = parent
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "index_add_"
                and len(call.args) == 3
                and call.args[1] is node
                and isinstance(call.args[0], ast.Constant)
                and call.args[0].value == 0
                and not call.keywords
                and isinstance(self.ctx.parent(call), ast.Expr)
                and self.ctx.parent(call) in self.loop.body
            ):
                if accumulation is not None:
                    raise DeclineError("moe-index-use", "the tokens are accumulated more than once")
                accumulation = call
                continue
            if self._empty_skip(node) is not None:
                continue
            raise DeclineError("moe-index-use", f"`{node.id}` is used as more than a row index (`{self.ctx.excerpt(parent or node, 40)}`): with every token it would change")
        if accumulation is None:
            raise DeclineError("moe-index-use", "no `out.index_add_(0, token, value)` accumulates the expert's rows")
        if self.token not in _names(accumulation.args[1]) and not (_names(accumulation.args[1]) & indices):
            raise DeclineError("moe-index-use", "the accumulation does not index by the gathered tokens")
        return accumulation

    def _empty_skip(self, node: ast.Name) -> ast.If | None:
        """`if token.shape[0] == 0: continue` (or `token.numel() == 0`): dropped with every token."""
        statement = self.ctx.statement_of(node)
        if not (isinstance(statement, ast.If) and self._is_empty_skip(statement, {node.id})):
            return None
        self.edits.replace_statement(statement, None)
        return statement

    def _is_empty_skip(self, statement: ast.If, indices: set[str]) -> bool:
        """`if <index>.shape[0] == 0: continue` (or `.numel()`, `len(...)`, `.size(0)`) in the loop's body."""
        if not (statement in self.loop.body and not statement.orelse):
            return False
        if not (len(statement.body) == 1 and isinstance(statement.body[0], ast.Continue)):
            return False
        test = statement.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            return False
        if not (isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0):
            return False
        size = self.ctx.code(test.left).replace(" ", "")
        return any(size in (f"{n}.shape[0]", f"{n}.numel()", f"len({n})", f"{n}.size(0)") for n in indices)

    def _inside_loop(self, node: ast.AST) -> bool:
        return any(a is self.loop for a in self.ctx.ancestors(node))

    # -- replacements -------------------------------------------------------------------------
    def _replace_gather(self) -> None:
        torch = self.ctx.torch_name()
        expert_mask = f"{self.mask}[{self.expert}]"
        self.routed = fresh_name(self.function, f"{self.token}_routed")
        self.edits.replace_statement(
            self.gather,
            [
                f"{self.token} = {torch}.arange({self.mask}.shape[-1], device={self.mask}.device)  # every token (graphmend: fixed-shape MoE dispatch)",
                f"{self.slot} = {expert_mask}.argmax(dim=0)",
                f"{self.routed} = {expert_mask}.any(dim=0)",
            ],
        )

    def _mask_accumulation(self, accumulation: ast.Call) -> None:
        torch = self.ctx.torch_name()
        value = accumulation.args[2]
        masked = cst.parse_expression(f"{torch}.where({self.routed}[:, None], {self.ctx.argument(value)}, 0)")
        target = self.ctx.cst_node(self.function, value, cst.BaseExpression)  # type: ignore[type-abstract]
        self.edits.replacements[target] = masked


class _SparseRewrite(_Rewrite):
    """Every expert, the original gathers: only the loop's iterable changes (and a skip of an
    expert without tokens goes: it would guard on the unbacked size, and such an expert adds
    nothing). Running the body for an expert without tokens must change nothing, so the body may
    only bind names (not read after the loop) and accumulate with `index_add_`."""

    def fix(self, finding: Finding) -> Fix:
        flag = module_flag_value(self.ctx, SHAPE_FLAG)
        if flag is False:
            raise DeclineError("flag-already-set", f"this module sets `torch._dynamo.config.{SHAPE_FLAG}` to something other than True")
        self._check_mask()
        self._check_loop_iterable()
        self._check_body_adds_nothing_when_empty()
        if self.rows:
            self._unsqueeze_gather()
        edits = (self.edits.edit(),) if flag else (self.edits.edit(), flag_edit(self.ctx, SHAPE_FLAG))
        return Fix(finding, SPARSE_TITLE, Safety.UNSAFE, edits)

    def _check_body_adds_nothing_when_empty(self) -> None:
        indices = self._aliases()
        bound: set[str] = set()
        accumulations = 0
        for statement in self.loop.body:
            if isinstance(statement, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) for t in statement.targets):
                targets = [n for t in statement.targets for n in walk(t)]
                if all(isinstance(n, (ast.Name, ast.Tuple, ast.Store)) for n in targets):
                    bound |= {n.id for n in targets if isinstance(n, ast.Name)}
                    continue
            if isinstance(statement, ast.If) and self._is_empty_skip(statement, indices):
                self.edits.replace_statement(statement, None)
                continue
            if isinstance(statement, ast.If) and self._is_expert_skip(statement, (indices | bound) - {self.expert}):
                continue  # `if expert_idx == sentinel: continue`: skipping an expert without tokens skips nothing
            if self._is_accumulation(statement, indices):
                accumulations += 1
                continue
            raise DeclineError(
                "moe-body-effect",
                f"the loop does more than gather, compute and `index_add_` (`{excerpt(self.ctx.code(statement).splitlines()[0], 50)}`): "
                "run for an expert without tokens it could change something",
            )
        if accumulations == 0:
            raise DeclineError("moe-index-use", "no `out.index_add_(0, token, value)` accumulates the expert's rows")
        end = self.loop.end_lineno or self.loop.lineno
        for node in walk(self.function):
            if isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load) and node.lineno > end:
                raise DeclineError("moe-name-after-loop", f"`{node.id}` is read after the loop, where it would hold the last expert's value, not the last expert hit's")

    def _is_expert_skip(self, statement: ast.If, loop_values: set[str]) -> bool:
        """`if <test of the expert, without calls>: continue`, the test reading no value the loop computes."""
        return (
            len(statement.body) == 1
            and isinstance(statement.body[0], ast.Continue)
            and not statement.orelse
            and not any(isinstance(n, ast.Call) for n in walk(statement.test))
            and not (_names(statement.test) & loop_values)
        )

    def _is_accumulation(self, statement: ast.stmt, indices: set[str]) -> bool:
        call = statement.value if isinstance(statement, ast.Expr) else None
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "index_add_"
            and len(call.args) == 3
            and not call.keywords
            and isinstance(call.args[0], ast.Constant)
            and call.args[0].value == 0
            and bool(_names(call.args[1]) & indices)
        )

    def _unsqueeze_gather(self) -> None:
        """`torch.where(mask[e].squeeze(0))` with `e` a row becomes `torch.where(mask[e])` with `e`
        an int (the squeeze would drop the top-k dimension when top_k is 1)."""
        argument = self.gather.value.args[0]  # type: ignore[attr-defined]
        if isinstance(argument, ast.Call):
            self.edits.replace(argument, cst.parse_expression(f"{self.mask}[{self.expert}]"), cst.Call)


MASKED_TITLE = (
    "Update every expert's rows with torch.where instead of boolean-mask indexing: each expert runs on all tokens "
    "(num_experts times the expert FLOPs; same values up to rounding, assuming experts treat tokens independently)"
)
_FRESH_TENSOR = {"torch.zeros", "torch.zeros_like", "torch.ones", "torch.ones_like", "torch.empty", "torch.empty_like", "torch.full", "torch.full_like"}


class MaskedExpertUpdateFixer:
    narrow = True  # one shape of its codes (an expert dispatch): its "not my pattern" says least
    """Switch-Transformers-style dispatch: `out[mask[..., e]] = expert_e(x[mask[..., e]])` for the
    experts hit (a `.nonzero().tolist()` list) -> a loop over every expert with
    `out = torch.where(mask[..., e, None], expert_e(x).to(out.dtype), out)`.

    Rows the mask selects get the expert's output as before (the expert treats rows independently,
    which is what dispatching a subset of rows assumes), the others keep their value. `out` must be
    a fresh tensor the function made (`torch.zeros(...)`, `.clone()`) so that rebinding it instead
    of writing into it changes nothing another name could see."""

    codes = frozenset({"GM402", "GM202", "GM401"})
    safety = Safety.COSTLY

    def plan(self, finding: Finding, ctx: FixContext) -> Fix:
        node = ctx.node_for(finding)
        function = ctx.function_of(node) if node is not None else None
        if node is None or function is None:
            raise DeclineError("no-node", "could not find the code in the source")
        loop = self._loop(ctx, function, node)
        if loop is None:
            raise DeclineError("moe-no-dispatch", "not part of a masked expert update loop (`out[mask[..., e]] = expert(x[mask[..., e]])`)")
        update = loop.body[0]
        assert isinstance(update, ast.Assign) and isinstance(update.targets[0], ast.Subscript) and isinstance(update.value, ast.Call)
        out, mask, call = update.targets[0].value, update.targets[0].slice, update.value
        gathered = call.args[0]
        assert isinstance(out, ast.Name) and isinstance(gathered, ast.Subscript) and isinstance(loop.target, ast.Name)
        position, router = self._expert_position(ctx, mask, loop.target.id)
        self._check_fresh(ctx, function, out.id, loop)
        edits = _Edits(ctx, function)
        self._replace_iterable(ctx, function, loop, router, position, edits)
        torch = ctx.torch_name()
        assert isinstance(mask, ast.Subscript) and isinstance(mask.slice, ast.Tuple)
        mask_code = f"{ctx.code(mask.value)}[{', '.join(ctx.code(p) for p in mask.slice.elts)}, None]"
        expert = f"{ctx.code(call.func)}({ctx.argument(gathered.value)})"
        text = f"{out.id} = {torch}.where({mask_code}, {expert}.to({out.id}.dtype), {out.id})"
        edits.replace_statement(update, [text])
        return Fix(finding, MASKED_TITLE, Safety.COSTLY, (edits.edit(),))

    def _loop(self, ctx: FixContext, function: ast.AST, node: ast.AST) -> ast.For | None:
        candidates = [a for a in ctx.ancestors(node) if isinstance(a, ast.For)] + _loops_over_assigned(ctx, function, node)
        for loop in candidates:
            if self._is_update_loop(ctx, loop):
                return loop
        return None

    def _is_update_loop(self, ctx: FixContext, loop: ast.For) -> bool:
        if not (isinstance(loop.target, ast.Name) and len(loop.body) == 1 and not loop.orelse):
            return False
        update = loop.body[0]
        if not (isinstance(update, ast.Assign) and len(update.targets) == 1 and isinstance(update.targets[0], ast.Subscript)):
            return False
        target, value = update.targets[0], update.value
        if not (isinstance(target.value, ast.Name) and isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords):
            return False
        gathered = value.args[0]
        return (
            isinstance(gathered, ast.Subscript)
            and ctx.code(gathered.slice) == ctx.code(target.slice)
            and loop.target.id in _names(target.slice)
            and ctx.kind(target.slice) in BOOL_KINDS
        )

    def _expert_position(self, ctx: FixContext, mask: ast.expr, expert: str) -> tuple[int, str]:
        """`router[:, :, e]` -> (2, "router"): the mask of expert e is a slice of a bool tensor."""
        if not (isinstance(mask, ast.Subscript) and isinstance(mask.value, ast.Name) and isinstance(mask.slice, ast.Tuple)):
            raise DeclineError("moe-mask-origin", f"the mask `{ctx.excerpt(mask, 40)}` is not `router_mask[:, ..., e]`")
        parts = mask.slice.elts
        positions = [i for i, p in enumerate(parts) if isinstance(p, ast.Name) and p.id == expert]
        others_full = all(isinstance(p, ast.Slice) and p.lower is p.upper is p.step is None for i, p in enumerate(parts) if i not in positions)
        if len(positions) != 1 or not others_full:
            raise DeclineError("moe-mask-origin", f"the mask `{ctx.excerpt(mask, 40)}` is not `router_mask[:, ..., e]`")
        return positions[0], mask.value.id

    def _check_fresh(self, ctx: FixContext, function: ast.AST, out: str, loop: ast.For) -> None:
        stores = _assignments(function, out)
        before = [s for s in stores if s.lineno < loop.lineno]
        value = before[-1].value if before else None
        fresh = isinstance(value, ast.Call) and (
            ctx.qualname(value.func) in _FRESH_TENSOR or (isinstance(value.func, ast.Attribute) and value.func.attr == "clone")
        )
        aliased = any(
            isinstance(n, ast.Name) and n.id == out and isinstance(n.ctx, ast.Load) and isinstance(ctx.parent(n), (ast.Assign, ast.Call, ast.Return)) and n.lineno < loop.lineno
            for n in walk(function)
        )
        if not fresh or aliased or len(before) != 1:
            raise DeclineError("moe-output-shared", f"`{out}` is not a fresh tensor made once before the loop: writing into it may be seen through another name")

    def _replace_iterable(self, ctx: FixContext, function: ast.AST, loop: ast.For, router: str, position: int, edits: _Edits) -> None:
        iterable = loop.iter
        if isinstance(iterable, ast.Call) and ctx.qualname(iterable.func) == "builtins.range":
            return
        if not isinstance(iterable, ast.Name):
            raise DeclineError("moe-loop-iterable", f"the loop runs over `{ctx.excerpt(iterable, 40)}`, neither `range(...)` nor a list of the experts hit")
        stores = _assignments(function, iterable.id)
        before = [s for s in stores if s.lineno < loop.lineno]
        if not before or len(stores) != len(before):
            raise DeclineError("moe-loop-iterable", f"cannot tell that `{iterable.id}` lists the experts hit")
        hit = before[-1]
        code = ctx.code(hit.value).rstrip()
        sources = set().union(*(_names(s.value) for s in before))
        if "nonzero" not in code or not code.endswith(".tolist()") or router not in sources:
            raise DeclineError("moe-loop-iterable", f"`{iterable.id}` is not the `.nonzero(...).tolist()` experts of `{router}`")
        uses = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == iterable.id and isinstance(n.ctx, ast.Load)]
        if len(uses) != 1 + sum(iterable.id in _names(s.value) for s in before):
            raise DeclineError("moe-hit-used", f"`{iterable.id}` (the experts hit) is used elsewhere; it would still break")
        for statement in before:
            edits.replace_statement(statement, None)
        edits.replace(iterable, cst.parse_expression(f"range({router}.shape[{position}])"), cst.Name)
