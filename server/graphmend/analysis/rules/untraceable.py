"""GM5xx: constructs dynamo cannot trace at all.

Explicit breaks, calls into code excluded from compilation, building parameters or classes while
tracing, autograd calls inside the graph, TorchScript modules, generators as compiled functions,
unsupported context managers and a handful of C-implemented standard-library helpers.
"""

from __future__ import annotations

import ast

from ..kinds import TENSOR_KINDS, Kind, is_tensor
from ..symbols import LOCK_CLASSES, RNN_FLAG
from .base import CallTableRule, Effect, Rule, RuleContext, TensorOpRule, compiled, example, receiver


class ExplicitGraphBreak(CallTableRule):
    code = "GM501"
    ok = (
        compiled(
            """
            if torch.compiler.is_compiling():
                return x * 2
            return x
            """
        ),
    )

class DisabledCall(Rule):
    code = "GM502"
    callee_kinds = frozenset({Kind.DISABLED})  # a decorated function, or torch.compiler.disable(fn)(...)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        ctx.report(self, node)

    breaks = (
        example(
            """
            import torch

            @torch.compiler.disable
            def eager_only(y):
                return y + 1

            @torch.compile
            def f(x):
                y = x * 2
                z = eager_only(y)  # expect: GM502
                return z * 3
            """
        ),
        example(
            """
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                @torch._dynamo.disable
                def debug_hook(self, y):
                    return y.clone()

                def forward(self, x):
                    y = x.relu()
                    y = self.debug_hook(y)  # expect: GM502
                    return torch.compiler.disable(torch.sigmoid)(y)  # expect: GM502

            def sample():
                return Model(), (torch.randn(4),), {}
            """
        ),
        example(
            """
            import torch

            def nullwrap(fn=None):
                return fn

            disable_compiler = getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap
            try:
                no_compile = torch._dynamo.disable
            except AttributeError:
                def no_compile(fn):
                    return fn

            @disable_compiler
            def eager_only(y):
                return y + 1

            @no_compile
            def also_eager(y):
                return y * 2

            @torch.compile
            def f(x):
                y = eager_only(x * 2)  # expect: GM502
                return also_eager(y) * 3  # expect: GM502
            """,
            note="names bound to torch.compiler.disable, as timm's `disable_compiler` is",
        ),
        example(
            """
            import torch

            def helper(y):
                return y.nonzero().float().sum()  # expect: GM401

            @torch._dynamo.disable(recursive=False)
            def wrapper(y):
                return helper(y) * 2

            @torch.compile
            def f(x):
                return wrapper(x) + 1  # expect: GM502
            """,
            note="recursive=False skips only the function's own frame: what it calls is compiled",
        ),
    )
    ok = (
        example(
            """
            import torch

            def helper(y):
                return y + 1

            @torch.compile
            def f(x):
                return helper(x * 2) * 3
            """,
            note="a plain helper is traced into",
        ),
    )

class ClassDefinition(Rule):
    code = "GM503"
    statement_types = (ast.ClassDef,)

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.ClassDef)
        ctx.report(self, node, name=node.name)

    breaks = (
        compiled(
            """
            y = x * 2
            class Local:  # expect: GM503
                k = 3
            return y + Local.k
            """
        ),
    )
    ok = (
        example(
            """
            import torch

            class Settings:
                k = 3

            @torch.compile
            def f(x):
                return x * Settings.k
            """,
            note="a class defined at module level",
        ),
    )

class ParameterConstruction(CallTableRule):
    code = "GM504"
    breaks = (
        example(
            """
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x):
                    proj = nn.Linear(x.shape[-1], 4)  # expect: GM504
                    return proj(x)

            def sample():
                return Model(), (torch.randn(2, 4),), {}
            """
        ),
    )
    ok = (
        example(
            """
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x):
                    act = nn.Sequential(nn.ReLU(), nn.Dropout(0.0), nn.Identity(), nn.Softmax(dim=-1))
                    return act(x)

            def sample():
                return Model(), (torch.randn(2, 4),), {}
            """,
            note="layers without parameters can be built while tracing",
        ),
    )


class DeepCopy(Rule):
    code = "GM505"
    qualnames = frozenset({"copy.deepcopy"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if node.args and (ctx.kind(node.args[0]) in TENSOR_KINDS | {Kind.TENSORS, Kind.MODULE, Kind.MODULES}):
            ctx.report(self, node)

    breaks = (
        example(
            """
            import copy
            import torch

            @torch.compile
            def f(x):
                y = x * 2
                z = copy.deepcopy(y)  # expect: GM505
                w = copy.deepcopy([y])  # expect: GM505
                return z + w[0]
            """
        ),
    )
    ok = (
        example(
            """
            import copy
            import torch

            @torch.compile
            def f(x):
                settings = copy.deepcopy({"scale": 2})
                return x.clone() * settings["scale"]
            """
        ),
    )


class Backward(TensorOpRule):
    code = "GM506"
    methods = frozenset({"backward"})

    breaks = (
        compiled(
            """
            w = x.detach().clone().requires_grad_(True)  # expect: GM507
            loss = (w * 2).sum()
            loss.backward()  # expect: GM506
            return w.grad + 1
            """
        ),
    )
    ok = (
        compiled(
            """
            y = (x * 2).detach()
            return y.grad if y.grad is not None else y + 1
            """
        ),
    )

class RequiresGradInPlace(TensorOpRule):
    code = "GM507"
    methods = frozenset({"requires_grad_"})

    breaks = (
        compiled(
            """
            y = x * 2
            y.requires_grad_()  # expect: GM507
            return y + 1
            """
        ),
    )
    ok = (
        compiled(
            """
            y = x * 2
            return y + 1 if y.requires_grad else y - 1
            """,
            note="reading requires_grad is fine",
        ),
    )

class SortByTensor(Rule):
    code = "GM508"
    qualnames = frozenset({"builtins.sorted"})
    methods = frozenset({"sort"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        key = next((k.value for k in node.keywords if k.arg == "key"), None)
        if ctx.qualname(node.func) == "builtins.sorted":
            items = node.args[0] if node.args else None
        else:
            items = receiver(node)
            if items is None or is_tensor(ctx.kind(items)):
                return  # Tensor.sort is a traceable tensor op
            if key is None:
                return
        if items is None:
            return
        if key is None:
            if ctx.kind(items) is Kind.TENSORS:
                ctx.report(self, node)
            return
        if isinstance(key, ast.Lambda) and is_tensor(ctx.lambda_result(key, ctx.kind(items))):  # type: ignore[attr-defined]
            ctx.report(self, node)

    breaks = (
        compiled(
            """
            ys = [x * 2, x * 3]
            ys = sorted(ys, key=lambda t: t.sum())  # expect: GM508
            return ys[0] + 1
            """
        ),
        compiled(
            """
            ys = [x * 2, x * 3]
            ys.sort(key=lambda t: t.sum())  # expect: GM508
            return ys[0] + 1
            """
        ),
    )
    ok = (
        compiled(
            """
            names = sorted(["b", "a"], key=lambda s: len(s))
            values, order = x.sort()
            return values + order + len(names)
            """
        ),
    )


class GeneratorEntry(Rule):
    code = "GM509"
    effect = Effect.SILENT_SKIP
    node_types = (ast.Yield, ast.YieldFrom)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        if ctx.is_entry and ctx.once(self.code):  # type: ignore[attr-defined]
            ctx.report(self, node, function=ctx.function_name)

    breaks = (
        example(
            """
            import torch

            @torch.compile
            def f(x):
                y = x * 2
                yield y + 1  # expect: GM509

            def sample():
                return f, (torch.randn(4),), {}
            """
        ),
    )
    ok = (
        example(
            """
            import torch

            def pieces(x):
                yield x * 2
                yield x * 3

            @torch.compile
            def f(x):
                return sum(pieces(x))
            """,
            note="a generator called from compiled code is traced",
        ),
    )


def _is_method_call(node: ast.expr, names: tuple[str, ...], ctx: RuleContext) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
        and is_tensor(ctx.kind(node.func.value))
    )


class StorageIntrospection(Rule):
    code = "GM510"
    node_types = (ast.Compare, ast.BinOp)
    methods = frozenset({"storage_offset"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        if isinstance(node, ast.Call):
            if _is_method_call(node, ("storage_offset",), ctx):
                ctx.report(self, node)
        elif isinstance(node, ast.Compare):
            if any(_is_method_call(o, ("data_ptr",), ctx) for o in [node.left, *node.comparators]):
                ctx.report(self, node)
        elif isinstance(node, ast.BinOp):
            if any(_is_method_call(o, ("data_ptr",), ctx) for o in (node.left, node.right)):
                ctx.report(self, node, effect=Effect.FRAME_SKIP)

    breaks = (
        compiled(
            """
            y = x.view(2, 2)
            shared = y.data_ptr() == x.data_ptr()  # expect: GM510
            return y + 1
            """
        ),
        compiled(
            """
            y = x * 2
            return y + y.storage_offset()  # expect: GM510
            """
        ),
    )
    ok = (
        compiled(
            """
            y = x.view(2, 2)
            same_layout = y.is_contiguous() and y.stride()[0] == 2
            return y.flatten() + same_layout
            """
        ),
    )

class ScriptedModuleCall(Rule):
    code = "GM511"
    effect = Effect.FRAME_SKIP
    callee_kinds = frozenset({Kind.JIT})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        ctx.report(self, node)

    breaks = (
        example(
            """
            import torch
            from torch import nn

            scripted = torch.jit.script(nn.Linear(4, 4))

            @torch.compile
            def f(x):
                y = x * 2
                return scripted(y) + 1  # expect: GM511
            """
        ),
    )
    ok = (
        example(
            """
            import torch

            @torch.jit.script
            def scripted_fn(y):
                return y + 1

            @torch.compile
            def f(x):
                return scripted_fn(x * 2) + 1
            """,
            note="a scripted *function* is traced; only scripted modules break",
        ),
    )


class IsInference(Rule):
    code = "GM512"
    methods = frozenset({"is_inference"})
    qualnames = frozenset({"torch.is_inference_mode_enabled"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if ctx.qualname(node.func) in self.qualnames or _is_method_call(node, ("is_inference",), ctx):
            ctx.report(self, node)

    breaks = (
        compiled(
            """
            y = x * 2
            if y.is_inference():  # expect: GM512
                return y
            return y + 1
            """
        ),
        compiled(
            """
            y = x * 2
            if torch.is_inference_mode_enabled():  # expect: GM512
                return y
            return y + 1
            """
        ),
    )
    ok = (
        compiled(
            """
            if inference:
                return x
            return x + 1
            """,
            params="x, inference=False",
        ),
    )

class IdArithmetic(Rule):
    code = "GM513"
    effect = Effect.FRAME_SKIP
    node_types = (ast.BinOp,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.BinOp)
        for operand in (node.left, node.right):
            if (
                isinstance(operand, ast.Call)
                and ctx.qualname(operand.func) == "builtins.id"
                and operand.args
                and is_tensor(ctx.kind(operand.args[0]))
            ):
                ctx.report(self, node)
                return

    breaks = (
        compiled(
            """
            y = x * 2
            return y + (id(y) % 2)  # expect: GM513
            """
        ),
    )
    ok = (
        compiled(
            """
            y = x * 2
            seen = {id(y): 1}
            return y + seen[id(y)]
            """
        ),
    )


class UnsupportedContextManager(Rule):
    code = "GM514"
    effect = Effect.FRAME_SKIP
    statement_types = (ast.With,)
    unsupported_calls = LOCK_CLASSES | {"torch.random.fork_rng", "torch.device"}

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.With)
        for item in node.items:
            expr = item.context_expr
            if ctx.kind(expr) is Kind.LOCK or (
                isinstance(expr, ast.Call) and ctx.qualname(expr.func) in self.unsupported_calls
            ):
                ctx.report(self, expr)

    breaks = (
        example(
            """
            import threading
            import torch

            _lock = threading.Lock()

            @torch.compile
            def f(x):
                y = x * 2
                with _lock:  # expect: GM514
                    z = y + 1
                return z * 3
            """
        ),
    )
    ok = (
        compiled(
            """
            with torch.no_grad(), torch.autocast("cpu", enabled=False):
                y = x * 2
            return y + 1
            """
        ),
    )

class AutogradGrad(Rule):
    code = "GM515"
    qualnames = frozenset({"torch.autograd.grad"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        ctx.report(self, node)

    breaks = (
        example(
            """
            import torch

            @torch.compile
            def f(x):
                y = (x * x).sum()
                (g,) = torch.autograd.grad(y, x)  # expect: GM515
                return g + 1

            def sample():
                return f, (torch.randn(4, requires_grad=True),), {}
            """
        ),
    )
    ok = (
        compiled(
            """
            with torch.enable_grad():
                y = (x * x).sum()
            return y + 1
            """
        ),
    )

class UntraceableStdlib(CallTableRule):
    code = "GM516"
    ok = (
        compiled(
            """
            order = sorted([3, 1, 2])
            return x * order[0] + max(order)
            """
        ),
    )

class ModuleConstruction(Rule):
    """Reported by the walker (no hook): see FunctionWalker._module_constructor_breaks."""

    code = "GM517"
    effect = Effect.FRAME_SKIP
    breaks = (
        example(
            """
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()  # expect: GM517
                    self.proj = nn.Linear(4, 4)  # expect: GM504

                def forward(self, x):
                    return self.proj(x)

            class Model(nn.Module):
                def forward(self, x):
                    block = Block()
                    return block(x) + 1

            def sample():
                return Model(), (torch.randn(2, 4),), {}
            """,
            note="a submodule built in forward (BigBird does this when it switches attention type)",
        ),
    )
    ok = (
        example(
            """
            import torch
            from torch import nn

            class Scale(nn.Module):
                def __init__(self, k):
                    super().__init__()
                    self.k = k

                def forward(self, x):
                    return x * self.k

            class Model(nn.Module):
                def forward(self, x):
                    return Scale(3)(x) + 1

            def sample():
                return Model(), (torch.randn(2, 4),), {}
            """,
            note="a module without parameters can be built while tracing",
        ),
    )


class RecurrentModuleCall(Rule):
    code = "GM518"
    effect = Effect.FRAME_SKIP
    callee_kinds = frozenset({Kind.MODULE})
    removed_by_flag = RNN_FLAG
    recurrent = frozenset({"LSTM", "GRU", "RNN"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        module = ctx.torch_module_class(node.func)
        if module in self.recurrent:
            ctx.report(self, node, module=module, where="")
            return
        # a base class's forward calling what a subclass sets up (timm's LSTM2d(RNN2dBase))
        subclasses = [(name, layer) for name, layer in ctx.subclass_torch_module_classes(node.func) if layer in self.recurrent]
        if subclasses:
            names = ", ".join(f"`{name}`" for name, _ in subclasses[:3])
            ctx.report(self, node, module=subclasses[0][1], where=f" in instances of {names}, which set it")

    breaks = (
        example(
            """
            import torch
            from torch import nn

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(4, 8, batch_first=True)
                    self.proj = nn.Linear(8, 2)

                def forward(self, x):
                    h = x * 2
                    out, _ = self.lstm(h)  # expect: GM518
                    return self.proj(out)

            def sample():
                return Encoder(), (torch.randn(2, 3, 4),), {}
            """
        ),
        example(
            """
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.GRU(4, 4)

                def forward(self, x):
                    y, _ = self.rnn(x + 1)  # expect: GM518
                    return y.sum()

            def sample():
                return Decoder(), (torch.randn(3, 2, 4),), {}
            """,
            note="a GRU, sequence-first",
        ),
        example(
            """
            import torch
            from torch import nn

            class RNN2dBase(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.Identity()

                def forward(self, x):
                    y, _ = self.rnn(x * 2)  # expect: GM518
                    return y.sum()

            class LSTM2d(RNN2dBase):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.LSTM(4, 4, batch_first=True)

            def sample():
                return LSTM2d(), (torch.randn(2, 3, 4),), {}
            """,
            note="timm's sequencer: the base's forward calls the LSTM a subclass sets up",
        ),
    )
    ok = (
        example(
            """
            import torch
            from torch import nn

            torch._dynamo.config.allow_rnn = True

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(4, 8, batch_first=True)

                def forward(self, x):
                    out, _ = self.lstm(x * 2)
                    return out.sum()

            def sample():
                return Encoder(), (torch.randn(2, 3, 4),), {}
            """,
            note="the module sets allow_rnn: dynamo traces the LSTM",
        ),
        example(
            """
            import torch
            from torch import nn

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cell = nn.LSTMCell(4, 8)

                def forward(self, x):
                    h, c = self.cell(x)
                    return h.sum()

            def sample():
                return Encoder(), (torch.randn(2, 4),), {}
            """,
            note="a single LSTMCell step is traced",
        ),
    )
