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

_HOIST = "Move it out of the compiled code."


class ExplicitGraphBreak(CallTableRule):
    code = "GM501"
    name = "explicit-graph-break"
    message = "`{subject}` asks dynamo to break the graph here"
    why = "an explicit graph break is always honoured"
    fix = "Delete it unless the split is intentional (e.g. to isolate code that must run eagerly)."
    table = {"torch._dynamo.graph_break": "torch._dynamo.graph_break()"}
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
    name = "call-to-disabled-function"
    message = "`{subject}` calls a function excluded from compilation with `torch.compiler.disable`"
    why = "dynamo never traces a disabled function: it ends the graph, calls it eagerly and resumes after it"
    fix = "Remove the decorator if the function is traceable, or accept the break if it is there on purpose."
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
    name = "class-definition"
    message = "class `{name}` is defined inside compiled code"
    why = "dynamo cannot trace building a new class (`__build_class__`), so it ends the graph"
    fix = "Define the class at module level (it must not close over the function's locals)."
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
    name = "parameter-construction"
    message = "`{subject}` creates new parameters inside compiled code"
    why = "dynamo does not support constructing `nn.Parameter` while tracing, so it ends the graph"
    fix = "Create the parameter or layer once, in `__init__` (or at module level), and reuse it."
    table = {
        "torch.nn.Parameter": "torch.nn.Parameter(torch.ones(3))",
        "torch.nn.parameter.Parameter": "torch.nn.parameter.Parameter(torch.ones(3))",
        "torch.nn.Linear": "torch.nn.Linear(4, 4)",
        "torch.nn.Bilinear": "torch.nn.Bilinear(4, 4, 4)",
        "torch.nn.Conv1d": "torch.nn.Conv1d(1, 1, 1)",
        "torch.nn.Conv2d": "torch.nn.Conv2d(1, 1, 1)",
        "torch.nn.Conv3d": "torch.nn.Conv3d(1, 1, 1)",
        "torch.nn.ConvTranspose1d": "torch.nn.ConvTranspose1d(1, 1, 1)",
        "torch.nn.ConvTranspose2d": "torch.nn.ConvTranspose2d(1, 1, 1)",
        "torch.nn.Embedding": "torch.nn.Embedding(4, 4)",
        "torch.nn.EmbeddingBag": "torch.nn.EmbeddingBag(4, 4)",
        "torch.nn.LayerNorm": "torch.nn.LayerNorm(4)",
        "torch.nn.GroupNorm": "torch.nn.GroupNorm(2, 4)",
        "torch.nn.RMSNorm": "torch.nn.RMSNorm(4)",
        "torch.nn.BatchNorm1d": "torch.nn.BatchNorm1d(4)",
        "torch.nn.BatchNorm2d": "torch.nn.BatchNorm2d(4)",
        "torch.nn.LSTM": "torch.nn.LSTM(4, 4)",
        "torch.nn.GRU": "torch.nn.GRU(4, 4)",
        "torch.nn.RNN": "torch.nn.RNN(4, 4)",
        "torch.nn.MultiheadAttention": "torch.nn.MultiheadAttention(4, 2)",
        "torch.nn.PReLU": "torch.nn.PReLU()",
    }
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
    name = "deepcopy-tensor"
    message = "`{subject}` deep-copies tensors"
    why = "dynamo does not support `copy.deepcopy` of a tensor or module, so it ends the graph"
    fix = "Use `t.clone()` for tensors; copy modules once, outside the compiled code."
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
    name = "backward-in-compiled-code"
    message = "`{subject}` runs the backward pass inside compiled code"
    why = "dynamo compiles forward graphs; `Tensor.backward()` is not traceable, so it ends the graph"
    fix = "Compile the model or the loss computation only, and call `.backward()` outside the compiled function."
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
    name = "requires-grad-in-compiled-code"
    message = "`{subject}` turns on gradients for an intermediate tensor"
    why = "dynamo does not let a `requires_grad_()` intermediate leak out of a graph, so it ends the graph"
    fix = "Set `requires_grad` on inputs or parameters before calling the compiled code."
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
    name = "sort-by-tensor"
    message = "`{subject}` orders Python objects by tensor values"
    why = "sorting compares tensor values, which dynamo does not know while tracing"
    fix = "Stack the tensors and use `torch.sort`/`torch.argsort` on the keys, then index."
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
    name = "compiled-generator"
    message = "compiled function `{function}` is a generator (`{subject}`)"
    why = "dynamo does not compile generator functions: it runs the whole function eagerly and logs nothing"
    fix = "Compile a regular function that does the tensor work, and call it from the generator."
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
    name = "storage-introspection"
    message = "`{subject}` inspects where a tensor's data lives in memory"
    why = "fake tensors have no real storage, so dynamo cannot trace addresses and offsets"
    fix = "Compare tensors by value or by shape instead, or do the check outside the compiled code."
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
    name = "torchscript-module-call"
    message = "`{subject}` calls a TorchScript module"
    why = "dynamo does not trace `torch.jit.script` modules; it gives up on the calling function"
    fix = "Call the eager `nn.Module` (drop `torch.jit.script`); `torch.compile` replaces TorchScript."
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
    name = "is-inference"
    message = "`{subject}` asks about inference mode while tracing"
    why = "dynamo does not trace `Tensor.is_inference()` or `torch.is_inference_mode_enabled()`, so it ends the graph"
    fix = "Check once outside the compiled code and pass the answer in as an argument."
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
    name = "id-of-tensor-arithmetic"
    message = "`{subject}` does arithmetic on a tensor's `id()`"
    why = "object identities of traced tensors are not real; dynamo gives up on the function"
    fix = "Key on something stable (a name or an index), or keep the id logic outside compiled code."
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
    name = "unsupported-context-manager"
    message = "`with {subject}` uses a context manager dynamo cannot trace"
    why = "dynamo cannot enter this kind of context manager, so it gives up on the whole function"
    fix = (
        "Take the lock (or fork the RNG) outside the compiled code; instead of `with torch.device(...)`, pass "
        "`device=` to the factory functions."
    )
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
    name = "autograd-grad"
    message = "`{subject}` computes gradients inside compiled code"
    why = "dynamo does not trace `torch.autograd.grad` by default, so it ends the graph"
    fix = "Compute gradients outside the compiled function (compile the forward and loss only)."
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
    name = "untraceable-stdlib"
    message = "`{subject}` calls a standard-library function dynamo cannot trace"
    why = "dynamo marks this C-implemented helper as skipped, so it ends the graph to call it eagerly"
    fix = "Use a plain Python or torch equivalent, or move the call out of the compiled code."
    imports = ("heapq", "bisect", "array", "statistics", "copy")
    table = {
        "heapq.heappush": "heapq.heappush([], 1)",
        "heapq.heappop": "heapq.heappop([1])",
        "bisect.bisect": "bisect.bisect([1], 1)",
        "bisect.bisect_left": "bisect.bisect_left([1], 1)",
        "bisect.insort": "bisect.insort([1], 2)",
        "array.array": 'array.array("i", [1])',
        "builtins.memoryview": 'memoryview(b"ab")',
        "builtins.bytearray": 'bytearray(b"ab")',
        "statistics.mean": "statistics.mean([1, 2])",
        "copy.copy": "copy.copy(y)",
    }
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
    name = "module-built-in-compiled-code"
    message = "`{subject}` initialises a new `{name}` inside compiled code"
    why = (
        "the constructor breaks the graph (it creates parameters), and dynamo cannot resume inside a "
        "half-initialised module, so it runs the constructor eagerly"
    )
    fix = "Build submodules once, in the parent's `__init__`, and reuse them in `forward`."
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
    name = "recurrent-module-call"
    message = "`{subject}` calls an `nn.{module}`{where}"
    why = (
        "dynamo does not trace `nn.LSTM`, `nn.GRU` or `nn.RNN` unless `torch._dynamo.config.allow_rnn` is set "
        "(found by the real-model benchmark: parakeet, nemotron ASR); it gives up on the calling function"
    )
    fix = "Set `torch._dynamo.config.allow_rnn = True` (process-wide) so dynamo traces the recurrent layer."
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


RULES: tuple[type[Rule], ...] = (
    ExplicitGraphBreak,
    DisabledCall,
    ClassDefinition,
    ParameterConstruction,
    DeepCopy,
    Backward,
    RequiresGradInPlace,
    SortByTensor,
    GeneratorEntry,
    StorageIntrospection,
    ScriptedModuleCall,
    IsInference,
    IdArithmetic,
    UnsupportedContextManager,
    AutogradGrad,
    UntraceableStdlib,
    ModuleConstruction,
    RecurrentModuleCall,
)
