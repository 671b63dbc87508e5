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
from .base import Effect, Rule, RuleContext, TensorOpRule, compiled, example, receiver


class Item(TensorOpRule):
    code = "GM201"
    methods = frozenset({"item"})
    removed_by_flag = SCALAR_FLAG
    breaks = (
        compiled(
            """
            y = x * 2
            s = y.sum().item()  # expect: GM201
            return y * s
            """
        ),
        compiled(
            """
            y = x * 2
            assert y.sum().item() > -1e9  # expect: GM201
            return y + 1
            """,
            note="a data-dependent assert does not break, but the .item() inside it does",
        ),
    )
    ok = (
        compiled(
            """
            y = x * 2
            s = y.sum()
            return y * s + x.shape[0]
            """
        ),
    )


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

    breaks = (
        compiled(
            """
            y = x * 2
            values = y.tolist()  # expect: GM202
            return y + values[0]
            """
        ),
        compiled(
            """
            sizes = (x.abs() * 0 + 1).long()
            parts = torch.split(x, sizes.tolist())  # expect: GM202
            return parts[0] + 1
            """,
            note="the MoE `expert_size.tolist()` idiom",
        ),
    )
    ok = (
        compiled(
            """
            dims = list(x.shape)
            return x.reshape(dims) + 1
            """
        ),
    )


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

    breaks = (
        compiled(
            """
            y = x * 2
            flag = bool(y.sum() > 0)  # expect: GM203
            return y + flag
            """
        ),
        example(
            """
            import math
            import torch

            @torch.compile
            def f(x):
                y = x * 2
                return y + math.sqrt(y.abs().sum())  # expect: GM203
            """
        ),
        compiled(
            """
            y = x * 2
            return y * float(y.mean()) + int(y.sum())  # expect: GM203
            """
        ),
    )
    ok = (
        example(
            """
            import math
            import torch

            @torch.compile
            def f(x):
                n = int(x.shape[0])
                return x / math.sqrt(x.shape[-1]) + float(n) + bool(x.dim())
            """
        ),
    )


class RangeOverTensor(Rule):
    code = "GM204"
    qualnames = frozenset({"builtins.range"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if any(is_tensor(ctx.kind(arg)) for arg in node.args):
            ctx.report(self, node)

    breaks = (
        compiled(
            """
            y = x * 2
            n = (y > 0).sum()
            total = 0
            for i in range(n):  # expect: GM204
                total += i
            return y + total
            """
        ),
    )
    ok = (
        compiled(
            """
            for i in range(x.shape[0]):
                x = x + i
            return x
            """
        ),
    )


class TensorAsIndex(Rule):
    code = "GM205"
    node_types = (ast.Subscript,)
    store_types = (ast.Subscript,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
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
            elif base in TENSOR_KINDS and ctx.kind(part) in SCALAR_KINDS and ctx.kind(part) not in BOOL_KINDS:
                ctx.report(self, node, index=ctx.snippet(part), role="integer index")
                return

    def check_store(self, node: ast.AST, ctx: RuleContext) -> None:
        """Writes, measured: `x[a:b] = v` with tensor bounds breaks as the read does, and so does
        `x[i] = v` with a 0-d integer tensor computed in the graph (`x.argmax()`, a count: dynamo
        reads its value); a boolean mask traces as an index_put and does not."""
        assert isinstance(node, ast.Subscript)
        base = ctx.kind(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.Slice):
                if self._slice_bound(node, part, ctx):
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

    breaks = (
        compiled(
            """
            y = x * 2
            n = (y > 0).sum()
            return y[:n].sum() + 1  # expect: GM205
            """,
            note="dynamo cannot resume after this break: the rest of the function runs eagerly",
        ),
        compiled(
            """
            options = [x, x * 2]
            i = x.argmax() % 2
            return options[i] + 1  # expect: GM205
            """
        ),
        compiled(
            """
            i = x.argmax()
            return x[i] + 1  # expect: GM205
            """
        ),
        example(
            """
            import torch
            from torch import nn

            class MoE(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

                def forward(self, x):
                    hit = (x.sum() > 0).long().reshape(1)
                    expert = self.experts[hit]  # expect: GM205
                    return expert(x)

            def sample():
                return MoE(), (torch.randn(2, 4),), {}
            """,
            note="`self.experts[expert_idx]` in MoE dispatch loops: the index is a tensor",
        ),
        compiled(
            """
            end = (x > 0).sum()
            y = x * 2
            y[:end, :end] = 0  # expect: GM205
            return y
            """,
            note="slice bounds assigned to (pixtral's block attention mask): the write breaks as a read does",
        ),
        compiled(
            """
            y = x * 2
            y[x.argmax()] = 0  # expect: GM205
            return y
            """,
            note="a write at a 0-d index computed in the graph: dynamo reads the index's value",
        ),
    )
    ok = (
        compiled(
            """
            half = x.shape[0] // 2
            idx = torch.argsort(x)
            return x[:half].sum() + x[idx] + x[..., None].squeeze(-1)
            """
        ),
        compiled(
            """
            y = x * 2
            y[y > 1] = 1
            return y
            """,
            note="a write through a boolean mask traces as an index_put (reading `y[y > 1]` breaks)",
        ),
    )


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
}
_SIZE_KEYWORDS = {"size", "k", "length", "chunks", "end", "start", "steps", "n", "shifts"}


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
        candidates += [k.value for k in node.keywords if k.arg in _SIZE_KEYWORDS]
        for arg in candidates:
            elements = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]
            for element in elements:
                kind = ctx.kind(element)
                if is_tensor(kind) and kind not in BOOL_KINDS:
                    ctx.report(self, node, size=ctx.snippet(element))
                    return

    breaks = (
        compiled(
            """
            n = (x > 0).sum() + 1
            return torch.zeros(n).sum() + x  # expect: GM206
            """
        ),
        compiled(
            """
            k = (x > 0).sum() + 1
            return x.topk(k).values.sum() + x  # expect: GM206
            """
        ),
        compiled(
            """
            rows = (x > 100).sum() + 2
            return x.view(rows, -1) + 1  # expect: GM206
            """
        ),
    )
    ok = (
        compiled(
            """
            n = x.shape[0]
            return torch.zeros(n, 2).sum() + x.view(n, 1).squeeze(1) + torch.arange(x.size(0))
            """
        ),
    )


class TensorToPythonBool(TensorOpRule):
    code = "GM207"
    qualnames = frozenset({"torch.equal", "torch.allclose", "torch.is_nonzero"})
    methods = frozenset({"equal", "allclose", "is_nonzero"})

    breaks = (
        compiled(
            """
            y = x * 2
            same = torch.allclose(y, x)  # expect: GM207
            return y + 1
            """
        ),
        compiled(
            """
            y = x * 2
            if torch.equal(y, x):  # expect: GM207
                return y
            return y + 1
            """
        ),
    )
    ok = (
        compiled(
            """
            y = x * 2
            return y + (y == x).all() + torch.isclose(y, x).all()
            """
        ),
    )


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

    breaks = (
        compiled(
            """
            y = x * 2
            text = str(y)  # expect: GM208
            return y + len(text)
            """
        ),
        compiled(
            """
            y = x * 2
            text = "value: %s" % (y,)  # expect: GM208
            return y + len(text)
            """,
            note="%-formatting a tensor makes dynamo skip the whole function",
        ),
    )
    ok = (
        compiled(
            """
            text = f"{x.shape} {x.dtype}" + str(x.shape[0])
            return x + len(text)
            """
        ),
    )


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
