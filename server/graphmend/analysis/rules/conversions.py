"""GM2xx: a tensor's *value* turned into a Python object (a number, a list, a bool, a string).

Dynamo traces with fake tensors that have shapes but no data. Code that needs the data as a
Python object (`.item()`, `.tolist()`, `int(t)`, a tensor used as a slice bound, a size or a list
index) cannot be traced: the graph ends, the value is computed eagerly, and tracing resumes.
`int(t.shape[0])`, `len(t)`, `t.size(0)` are shapes, known while tracing, and never break.
"""

from __future__ import annotations

import ast

from ..kinds import BOOL_KINDS, SCALAR_KINDS, TENSOR_KINDS, Kind, is_tensor
from ..symbols import SCALAR_FLAG
from .base import Effect, Rule, RuleContext, TensorOpRule, receiver


class ToList(TensorOpRule):
    code = "GM202"
    methods = frozenset({"tolist"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        target = receiver(node)
        if target is None or not is_tensor(ctx.kind(target)):
            return
        if SCALAR_FLAG in ctx.index.dynamo_flags and _integral(target, ctx):  # type: ignore[attr-defined]
            return  # captured as symbolic ints (a float tensor's tolist still breaks)
        ctx.report(self, node)


_CONVERTERS = {"builtins.int", "builtins.float", "builtins.bool", "builtins.complex"}


class PythonNumberFromTensor(Rule):
    code = "GM203"
    qualnames = frozenset(_CONVERTERS)
    qualname_roots = frozenset({"math"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if SCALAR_FLAG in ctx.index.dynamo_flags and ctx.qualname(node.func) in _CONVERTERS:  # type: ignore[attr-defined]
            return  # traced as a symbolic number (math.* still breaks)
        if any(is_tensor(ctx.kind(arg)) for arg in node.args):
            ctx.report(self, node)


class RangeOverTensor(Rule):
    code = "GM204"
    qualnames = frozenset({"builtins.range"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if any(is_tensor(ctx.kind(arg)) for arg in node.args):
            ctx.report(self, node)


class TensorAsIndex(Rule):
    code = "GM205"
    node_types = (ast.Subscript,)
    store_types = (ast.Subscript,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        """Reads, measured: a 0-d boolean mask (`s[x.sum() > 0]`) is a Python bool to dynamo, not a
        mask with a data-dependent count of elements: "Data dependent operator" (GB0033) with or
        without capture_dynamic_output_shape_ops, so it is this rule's (no flag removes it), not
        GM402's (torch 2.13)."""
        assert isinstance(node, ast.Subscript)
        base = ctx.kind(node.value)
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for part in parts:
            if isinstance(part, ast.Slice):
                if self._slice_bound(node, part, ctx):
                    return
            elif base in (Kind.PY_SEQ, Kind.TENSORS, Kind.MODULES) and is_tensor(ctx.kind(part)):
                role = "index into a ModuleList" if base is Kind.MODULES else "list index"
                ctx.report(self, node, index=ctx.snippet(part), role=role)
                return
            elif base in TENSOR_KINDS and ctx.kind(part) is Kind.BOOL_SCALAR:
                ctx.report(self, node, index=ctx.snippet(part), role="bool (a 0-d mask: whether to select at all)")
                return
            elif base in TENSOR_KINDS and ctx.kind(part) in SCALAR_KINDS and ctx.kind(part) not in BOOL_KINDS:
                ctx.report(self, node, index=ctx.snippet(part), role="integer index")
                return

    def check_store(self, node: ast.AST, ctx: RuleContext) -> None:
        """Writes, measured: `x[a:b] = v` with tensor bounds breaks as the read does, and so does
        `x[i] = v` with a 0-d integer tensor computed in the graph (`x.argmax()`, a count: dynamo
        reads its value); a boolean mask traces as an index_put and does not, unless it is 0-d
        (`out[x.sum() > 0] = 0.0`: "Data dependent operator", GB0033, with or without
        capture_dynamic_output_shape_ops or capture_scalar_outputs; measured on torch 2.13)."""
        assert isinstance(node, ast.Subscript)
        base = ctx.kind(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.Slice):
                if self._slice_bound(node, part, ctx):
                    return
            elif base in TENSOR_KINDS and ctx.kind(part) is Kind.BOOL_SCALAR:
                ctx.report(self, node, index=ctx.snippet(part), role="bool (a 0-d mask: whether to write at all)")
                return
            elif base in TENSOR_KINDS and ctx.kind(part) in SCALAR_KINDS and ctx.kind(part) not in BOOL_KINDS:
                ctx.report(self, node, index=ctx.snippet(part), role="integer index")
                return

    def _slice_bound(self, node: ast.Subscript, part: ast.Slice, ctx: RuleContext) -> bool:
        """Report a tensor slice bound of `part`; True when one was found."""
        for bound in (part.lower, part.upper, part.step):
            if bound is not None and is_tensor(ctx.kind(bound)):
                if SCALAR_FLAG in ctx.index.dynamo_flags:  # type: ignore[attr-defined]
                    return True  # traced with an unbacked size
                # Dynamo cannot resume after a data-dependent slice (measured).
                ctx.report(self, node, effect=Effect.RESUME_FAILS, index=ctx.snippet(bound), role="slice bound")
                return True
        return False


# Functions and methods whose positional arguments are sizes (Python ints).
_SIZE_FUNCTIONS = {
    "torch.zeros": None,
    "torch.ones": None,
    "torch.empty": None,
    "torch.rand": None,
    "torch.randn": None,
    "torch.randperm": None,
    "torch.eye": None,
    "torch.arange": None,
    "torch.full": (0,),
    "torch.nn.functional.pad": (1,),
    "torch.nn.functional.interpolate": (1, 2),
    "torch.nn.functional.upsample": (1, 2),
    "torch.tensor_split": (1,),
    # each measured to break on torch 2.13 with a computed 0-d tensor in that place
    "torch.topk": (1,),
    "torch.kthvalue": (1,),
    "torch.narrow": (2, 3),
    "torch.chunk": (1,),
    "torch.roll": (1,),
    "torch.split": (1,),
    "torch.randint": None,
    "torch.linspace": (2,),
    "torch.logspace": (2,),
    "torch.multinomial": (1,),
    "torch.diagonal": (1,),
    "torch.tril": (1,),
    "torch.triu": (1,),
}
_SIZE_METHODS = {
    "view": None,
    "reshape": None,
    "expand": None,
    "repeat": None,
    "tile": None,
    "new_zeros": None,
    "new_ones": None,
    "new_empty": None,
    "new_full": (0,),
    "topk": (0,),
    "narrow": (1, 2),
    "chunk": (0,),
    "roll": (0,),
    "tensor_split": (0,),
    "kthvalue": (0,),
    "split": (0,),
    "multinomial": (0,),
    "diagonal": (0,),
    "tril": (0,),
    "triu": (0,),
    "unflatten": (1,),
}
_SIZE_KEYWORDS = {
    "size", "k", "length", "chunks", "end", "start", "steps", "n", "shifts", "pad", "scale_factor", "indices_or_sections",
    "split_size_or_sections", "split_size", "num_samples", "offset", "diagonal", "low", "high", "sizes",
}
# Functions whose keywords of `_SIZE_KEYWORDS` are not all sizes: linspace and logspace take
# tensors as `start`/`end` (dynamo traces them), only `steps` is a number.
_KEYWORDS_OF = {"torch.linspace": frozenset({"steps"}), "torch.logspace": frozenset({"steps"})}
# Arguments read as numbers even when the tensor is an input of the compiled frame, whose value
# dynamo could guard on: interpolate's scale factor (its Python code computes with it) and
# tensor_split's indices (measured, torch 2.13; interpolate's `size` as an input does not break).
_READ_EVEN_AS_INPUT = {
    "torch.nn.functional.interpolate": (2, "scale_factor"),
    "torch.nn.functional.upsample": (2, "scale_factor"),
    "torch.tensor_split": (1, "indices_or_sections"),
    "tensor_split": (0, "indices_or_sections"),
}


class TensorAsSize(Rule):
    code = "GM206"
    qualnames = frozenset(_SIZE_FUNCTIONS)
    methods = frozenset(_SIZE_METHODS)
    removed_by_flag = SCALAR_FLAG

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        name = ctx.qualname(node.func)
        if name in _SIZE_FUNCTIONS:
            positions = _SIZE_FUNCTIONS[name]
        else:
            target = receiver(node)
            if target is None or not is_tensor(ctx.kind(target)) or not isinstance(node.func, ast.Attribute):
                return
            positions = _SIZE_METHODS.get(node.func.attr)  # type: ignore[assignment]  # both tables hold tuples of positions
        candidates = [a for i, a in enumerate(node.args) if positions is None or i in positions]
        keywords = _KEYWORDS_OF.get(name or "", _SIZE_KEYWORDS)
        candidates += [k.value for k in node.keywords if k.arg in keywords]
        method = node.func.attr if name not in _SIZE_FUNCTIONS and isinstance(node.func, ast.Attribute) else None
        read = _READ_EVEN_AS_INPUT.get(name if method is None else method)  # type: ignore[arg-type]
        always = [a for i, a in enumerate(node.args) if read is not None and i == read[0]]
        always += [k.value for k in node.keywords if read is not None and k.arg == read[1]]
        for arg in candidates:
            if ctx.frame_input(arg) and not any(arg is a for a in always):
                continue  # dynamo guards on an input's value (a tuple input's elements too)
            if (
                name == "torch.nn.functional.pad"
                and not isinstance(arg, (ast.Tuple, ast.List))  # a display: its elements are checked below
                and ctx.kind(arg) is Kind.TENSORS
            ):
                # a tuple of tensors as the sizes: `F.pad(x, paddings)` where the callers pass
                # `(self.padding_total, extra)`, buffers (mimi, encodec): each is read with .item()
                ctx.report(self, node, size=ctx.snippet(arg))
                return
            # a display's elements, or a comprehension's (`[h * w for h, w in shapes]` over a tensor)
            elements = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg.elt] if isinstance(arg, (ast.ListComp, ast.GeneratorExp)) else [arg]
            for element in elements:
                kind = ctx.kind(element)
                if is_tensor(kind) and kind not in BOOL_KINDS and (not ctx.frame_input(element) or (element is arg and any(arg is a for a in always))):
                    ctx.report(self, node, size=ctx.snippet(element))
                    return


class TensorToString(Rule):
    code = "GM208"
    qualnames = frozenset({"builtins.str", "builtins.repr"})
    methods = frozenset({"__repr__", "__str__"})
    node_types = (ast.BinOp,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        if isinstance(node, ast.Call):
            name = ctx.qualname(node.func)
            if name in ("builtins.str", "builtins.repr") and node.args and is_tensor(ctx.kind(node.args[0])):
                ctx.report(self, node)
            elif isinstance(node.func, ast.Attribute) and node.func.attr in ("__repr__", "__str__"):
                if is_tensor(ctx.kind(node.func.value)):
                    ctx.report(self, node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
                values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
                if any(is_tensor(ctx.kind(v)) for v in values):
                    ctx.report(self, node, effect=Effect.FRAME_SKIP)


class TensorMembership(Rule):
    """`x in t` / `x not in t` with a tensor `t`: Tensor.__contains__ reads the answer out of the
    tensor with `.item()` (transformers' padding warning: `pad_token_id in input_ids[:, [-1, 0]]`).
    A membership test on a shape, a list or a dict of tensors is Python's and does not break.
    The `.item()` breaks inside `__contains__`, a Python function of torch's that dynamo inlines,
    and dynamo cannot resume there: it runs the rest of the function eagerly (measured, torch 2.13)."""

    code = "GM209"
    node_types = (ast.Compare,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Compare)
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and is_tensor(ctx.kind(right)):
                ctx.report(self, node, effect=Effect.RESUME_FAILS)
                return
            if isinstance(op, (ast.In, ast.NotIn)) and is_tensor(ctx.kind(left)) and _sequence(right, ctx):
                # `t in [1.0, 2.0]`: the list compares `t == 1.0` and asks for its truth, a branch
                # on a tensor value; dynamo resumes after `in` but not after `not in` (measured)
                ctx.report(self, node, effect=Effect.FRAME_SKIP if isinstance(op, ast.NotIn) else Effect.BREAK)
                return
            left = right


def _sequence(node: ast.expr, ctx: RuleContext) -> bool:
    """A list or tuple: a display, or a name known to hold one of Python values (a set or a dict
    looks a tensor up by its hash, its identity: no comparison of values, no break)."""
    return isinstance(node, (ast.List, ast.Tuple)) or (isinstance(node, ast.Name) and ctx.kind(node) is Kind.PY_SEQ)


_INTEGRAL_METHODS = frozenset({"long", "int", "short", "argmax", "argmin", "argsort", "nonzero", "count_nonzero"})


def _integral(node: ast.expr, ctx: RuleContext) -> bool:
    """Known to hold an integer tensor: `.long()`, `.int()`, `argmax(...)`, `.to(torch.int64)`..."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _INTEGRAL_METHODS:
            return True
        name = ctx.qualname(func)
        if name is not None and name.rsplit(".", 1)[1] in _INTEGRAL_METHODS:
            return True
        if isinstance(func, ast.Attribute) and func.attr == "to" and node.args:
            return ctx.qualname(node.args[0]) in ("torch.long", "torch.int64", "torch.int", "torch.int32")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        return _integral(node.left, ctx) and (
            _integral(node.right, ctx) or (isinstance(node.right, ast.Constant) and isinstance(node.right.value, int))
        )
    return False


class ArithmeticOnRandomDraw(Rule):
    """`random.randint(0, n) + 1`, `size - random.randint(...)`, `-random.uniform(a, b)`, `r += 1`,
    `r >> 1`: dynamo traces the draw into the graph as an unspecialised number and has no rule for
    Python arithmetic or bit operations of it with a Python number (GB0213), so it skips the whole
    function. Arithmetic with a tensor (`x * r`), comparisons and `max(r, 1)` trace (measured on
    torch 2.13)."""

    code = "GM210"
    node_types = (ast.BinOp, ast.UnaryOp)
    statement_types = (ast.AugAssign,)
    effect = Effect.FRAME_SKIP
    skips_own_frame = True

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)) and _drawn(node.operand, ctx):
                ctx.report(self, node, draw=ctx.snippet(node.operand))
        elif isinstance(node, ast.BinOp):
            self._check_operands(node, [node.left, node.right], ctx)

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        if isinstance(node, ast.AugAssign):  # `r += 1`
            self._check_operands(node, [node.target, node.value], ctx)

    def _check_operands(self, node: ast.BinOp | ast.AugAssign, operands: list[ast.expr], ctx: RuleContext) -> None:
        if isinstance(node.op, ast.MatMult):
            return
        drawn = [o for o in operands if _drawn(o, ctx)]
        if drawn and all(o in drawn or ctx.kind(o) is Kind.PY for o in operands):
            ctx.report(self, node, draw=ctx.snippet(drawn[0]))


def _drawn(node: ast.expr, ctx: RuleContext) -> bool:
    """A number drawn with `random` as it was drawn: the call, or a name bound to it (arithmetic
    on it is reported where that arithmetic is)."""
    return isinstance(node, (ast.Name, ast.Call)) and ctx.kind(node) is Kind.RANDOM_NUMBER

