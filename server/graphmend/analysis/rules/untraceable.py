"""GM5xx: constructs dynamo cannot trace at all.

Explicit breaks, calls into code excluded from compilation, building parameters or classes while
tracing, autograd calls inside the graph, TorchScript modules, generators as compiled functions,
unsupported context managers and a handful of C-implemented standard-library helpers.
"""

from __future__ import annotations

import ast
import codecs
import functools
import importlib.util
from collections.abc import Mapping
from typing import ClassVar

from ...astwalk import walk
from ..kinds import TENSOR_KINDS, Kind, is_tensor
from ..super_properties import calls_super, first_use, instance_method, parent_of, property_kind, super_call
from ..symbols import LOCK_CLASSES, RNN_FLAG, SPARSE_CONSTRUCTORS, SPARSE_METHODS
from ..tensors import plain_assignments
from .base import Effect, Rule, RuleContext, receiver
from .catalogue import Example, words_for


class DisabledCall(Rule):
    code = "GM502"
    callee_kinds = frozenset({Kind.DISABLED})  # a decorated function, or torch.compiler.disable(fn)(...)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        ctx.report(self, node)


class ClassDefinition(Rule):
    code = "GM503"
    statement_types = (ast.ClassDef,)

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.ClassDef)
        ctx.report(self, node, name=node.name)


class DeepCopy(Rule):
    code = "GM505"
    qualnames = frozenset({"copy.deepcopy"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if node.args and (ctx.kind(node.args[0]) in TENSOR_KINDS | {Kind.TENSORS, Kind.MODULE, Kind.MODULES}):
            ctx.report(self, node)


class SortByTensor(Rule):
    """`sorted`, `list.sort`, and `max`/`min` of one iterable (`max(rows, key=lambda r: r.sum())`):
    each compares tensor values to order Python objects."""

    code = "GM508"
    qualnames = frozenset({"builtins.sorted", "builtins.max", "builtins.min"})
    methods = frozenset({"sort"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        key = next((k.value for k in node.keywords if k.arg == "key"), None)
        name = ctx.qualname(node.func)
        if name in ("builtins.max", "builtins.min") and (len(node.args) != 1 or isinstance(node.args[0], ast.Starred)):
            return  # `max(a, b)`: two values, another rule's (a tensor against a number)
        if name in ("builtins.sorted", "builtins.max", "builtins.min"):
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


class GeneratorEntry(Rule):
    code = "GM509"
    effect = Effect.SILENT_SKIP
    node_types = (ast.Yield, ast.YieldFrom)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        if ctx.is_entry and ctx.once(self.code):  # type: ignore[attr-defined]
            ctx.report(self, node, function=ctx.function_name)


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


class ScriptedModuleCall(Rule):
    code = "GM511"
    effect = Effect.FRAME_SKIP
    callee_kinds = frozenset({Kind.JIT})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        ctx.report(self, node)


class IsInference(Rule):
    code = "GM512"
    methods = frozenset({"is_inference"})
    qualnames = frozenset({"torch.is_inference_mode_enabled"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if ctx.qualname(node.func) in self.qualnames or _is_method_call(node, ("is_inference",), ctx):
            ctx.report(self, node)
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "is_inference" and not node.args and not node.keywords:
            # `self._cos_cached.is_inference()` on a cache set to None in `__init__` and filled
            # with a tensor elsewhere in the class (an enum's `is_inference()` is no tensor's)
            held = node.func.value
            if ctx.kind(held) in (Kind.UNKNOWN, Kind.NONE) and isinstance(held, ast.Attribute) and _set_from_torch(ctx, held.attr):
                ctx.report(self, node)


def _set_from_torch(ctx: RuleContext, attr: str) -> bool:
    """Whether some class of the file assigns `<obj>.<attr> = <value made by a torch call>`."""
    for info in ctx.index.classes.values():
        for node in walk(info.node):
            if not isinstance(node, ast.Assign) or not any(isinstance(t, ast.Attribute) and t.attr == attr for t in node.targets):
                continue
            if any(isinstance(n, ast.Call) and (ctx.qualname(n.func) or "").startswith("torch.") for n in walk(node.value)):
                return True
    return False


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


class UnsupportedContextManager(Rule):
    """`with` on a lock or on a factory in the catalogue's `[GM514.calls]`.

    Not a CallTableRule: the call itself traces (or is constant-folded); entering it is what
    dynamo refuses, so only a call that is a `with` item is reported, and the generated examples
    use it that way.
    """

    code = "GM514"
    effect = Effect.FRAME_SKIP
    skips_own_frame = True  # entering it: "Unsupported context manager" skips the function it is in
    statement_types = (ast.With,)
    table: ClassVar[Mapping[str, str]] = words_for("GM514").calls
    entered: ClassVar[frozenset[str]] = LOCK_CLASSES | frozenset(table)  # built once: this runs for every `with`

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.With)
        for item in node.items:
            expr = item.context_expr
            if ctx.kind(expr) is Kind.LOCK or (
                isinstance(expr, ast.Call) and ctx.qualname(expr.func) in self.entered
            ):
                ctx.report(self, expr)

    def all_examples(self) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
        generated = tuple(
            Example(
                f"import torch\n\n\n@torch.compile\ndef f(x):\n    with {call}:  # expect: {self.code}\n"
                "        y = x * 2\n    return y + 1\n",
                note=f"table entry {name}",
            )
            for name, call in self.table.items()
        )
        return self.breaks + generated, self.ok


class GeneratorObject(Rule):
    """A `torch.Generator` in compiled code: dynamo refuses to create one (an opaque object made
    mid-graph, GB0363), to call its methods (`manual_seed`, GB7650), and to pass one to a random op
    as `generator=` (GB0055). All measured on torch 2.13; `generator=None` traces."""

    code = "GM522"
    node_types = (ast.Call,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        func = node.func
        leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if leaf == "Generator" and ctx.qualname(func) == "torch.Generator":  # runs on every call: the name first
            ctx.report(self, node, use="creates")
        elif isinstance(func, ast.Attribute) and ctx.kind(func.value) is Kind.GENERATOR:
            ctx.report(self, node, use="calls a method of")
        elif any(k.arg == "generator" and ctx.kind(k.value) is Kind.GENERATOR for k in node.keywords):
            ctx.report(self, node, use="draws from")


# What an autograd.Function's `ctx` is told about tensors: it stores them, it computes nothing.
_AUTOGRAD_CONTEXT_METHODS = frozenset({"save_for_backward", "save_for_forward", "mark_dirty", "mark_non_differentiable", "set_materialize_grads"})


class SparseTensor(Rule):
    """Sparse tensors in compiled code: dynamo wraps none. Making one breaks (`to_sparse()` fails
    as dynamo wraps its result, GB0277; a `torch.sparse_*_tensor` constructor is a skipped call,
    GB0007), and the first use of the sparse result in the resumed code skips that whole function
    (GB0015). Measured on torch 2.13."""

    code = "GM523"
    node_types = (ast.Call,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        func = node.func
        leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        made = leaf.startswith(("sparse_", "to_sparse")) and (  # runs on every call: the name first
            ctx.qualname(func) in SPARSE_CONSTRUCTORS
            or (isinstance(func, ast.Attribute) and leaf in SPARSE_METHODS and is_tensor(ctx.kind(func.value)))
        )
        if made:
            ctx.report(self, node, use="makes")
            return
        if isinstance(func, ast.Attribute) and func.attr in _AUTOGRAD_CONTEXT_METHODS:
            return  # `ctx.save_for_backward(a, b)` in an autograd.Function: not a site (measured, pyGAT)
        operands = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(func, ast.Attribute):
            operands.append(func.value)
        if any(ctx.kind(operand) is Kind.SPARSE for operand in operands):
            ctx.report(self, node, use="uses", effect=Effect.FRAME_SKIP)


class AutogradGrad(Rule):
    code = "GM515"
    qualnames = frozenset({"torch.autograd.grad"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        ctx.report(self, node)


class ModuleConstruction(Rule):
    """Reported by the walker (no hook): see FunctionWalker._module_constructor_breaks."""

    code = "GM517"
    effect = Effect.FRAME_SKIP


RECURRENT_LAYERS = frozenset({"LSTM", "GRU", "RNN"})
RECURRENT_READ_TYPES: frozenset[type] = frozenset({ast.Attribute, ast.Name})


class RecurrentModuleCall(Rule):
    """Dynamo refuses an `nn.LSTM`/`GRU`/`RNN` as soon as it reads one, not only where it is called:
    `self.lstm.input_size`, `m = self.lstm`, or passing `self.lstm_actor` to a helper (sb3-contrib's
    recurrent policy) skip the function just as `self.lstm(x)` does (measured, torch 2.13)."""

    code = "GM518"
    effect = Effect.FRAME_SKIP
    skips_own_frame = True  # measured: no graph at all for a forward that reads its LSTM
    callee_kinds = frozenset({Kind.MODULE})
    node_types = tuple(RECURRENT_READ_TYPES)
    removed_by_flag = RNN_FLAG
    recurrent = RECURRENT_LAYERS

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        if isinstance(node, (ast.Attribute, ast.Name)):
            if isinstance(node.ctx, ast.Load):
                module = ctx.torch_module_class(node)
                if module in self.recurrent and not ctx.is_call_target(node):  # a call is reported as one
                    ctx.report(self, node, module=module, where="", action="is")
            return
        assert isinstance(node, ast.Call)
        module = ctx.torch_module_class(node.func)
        if module in self.recurrent:
            ctx.report(self, node, module=module, where="", action="calls")
            return
        # a base class's forward calling what a subclass sets up (timm's LSTM2d(RNN2dBase))
        subclasses = [(name, layer) for name, layer in ctx.subclass_torch_module_classes(node.func) if layer in self.recurrent]
        if subclasses:
            names = ", ".join(f"`{name}`" for name, _ in subclasses[:3])
            ctx.report(self, node, module=subclasses[0][1], where=f" in instances of {names}, which set it", action="calls")


class OptimizerStep(Rule):
    """`optimizer.zero_grad()`, `optimizer.step()` and an LR scheduler's `step()` in compiled code
    (measured, torch 2.13: `Optimizer.zero_grad` and `LRScheduler.step` are skipped functions, and
    `Optimizer.step` calls `torch._dynamo.graph_break()` around the update, under `no_grad` too;
    `nn.Module.zero_grad` traces). The receiver must be known to hold one: an attribute set to a
    `torch.optim` construction in `__init__`, a module-level one, or a parameter annotated with a
    `torch.optim` class or named `optimizer`/`*_optimizer` (a noise scheduler's `step()` traces, so
    a name alone never makes a scheduler)."""

    code = "GM533"
    methods = frozenset({"step", "zero_grad"})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        held = ctx.optimizer_class(node.func.value)
        if held is None or (node.func.attr == "zero_grad" and ".lr_scheduler." in held):
            return
        ctx.report(self, node, held=held)


class ComprehensionInEagerFunction(Rule):
    """Reported by the walker once a function is walked (no hook): see
    FunctionWalker.eager_comprehension_breaks."""

    code = "GM519"
    effect = Effect.FRAME_SKIP


class ResumedTensorMethod(Rule):
    """Reported by ModuleAnalysis once every function is walked (no hook): a helper of the file
    that breaks, called in the arguments of a C tensor method (see
    ModuleAnalysis._resumed_method_breaks)."""

    code = "GM524"


class HeldTensorMethodCall(Rule):
    """`mm = K.matmul` before a graph break, `mm(v)` after it: the resume function receives `mm` as
    an input, a builtin with no tensor behind it for dynamo, which it does not trace (GB0007;
    measured on torch 2.13). Called before any break, dynamo still knows the tensor and traces it."""

    code = "GM529"
    callee_kinds = frozenset({Kind.TENSOR_METHOD})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if ctx.frame_input(node.func):
            ctx.report(self, node)


class MethodOfObjectBuiltWhileTracing(Rule):
    """Reported by ModuleAnalysis once every function is walked (no hook): a method that breaks,
    called on an object the compiled code constructs (see CalleeResolver.built_here and
    ModuleAnalysis._built_object_breaks)."""

    code = "GM528"
    effect = Effect.FRAME_SKIP
    skips_own_frame = True


class SuperProperty(Rule):
    """`super().logits` where a base class holds `logits` as a property (DreamerV3's `OneHotDist`
    over torch.distributions): dynamo returns the property object instead of its value and fails
    where the code uses it (super_properties.py has the measurements). As an operand of arithmetic
    or a comparison, the failure is an exception inside dynamo's trace, and it gives up on the
    whole function it compiles; passed to a call or read further it is a break there. Bound to a
    name (`probs = super().probs`), it fails where the name is first used, and not at all unused."""

    code = "GM532"
    node_types = (ast.Attribute,)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Attribute)
        if not calls_super(node.value):
            return  # the cheap test first: this runs for every attribute of compiled code
        if not isinstance(node.ctx, ast.Load) or ctx.is_call_target(node):
            return
        cls = ctx.index.owner.get(id(ctx.function))
        params = ctx.function.args.posonlyargs + ctx.function.args.args
        if cls is None or not super_call(node.value, cls, params[0].arg if params else None) or not instance_method(ctx.function):
            return
        if property_kind(ctx.index, cls, node.attr) is None:
            return
        used: ast.AST | None = node
        parent = parent_of(ctx.function, node)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            used = first_use(ctx.function, parent.targets[0].id, parent)
            parent = parent_of(ctx.function, used) if used is not None else None
        if used is not None:
            operand = isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign))
            ctx.report(self, used, effect=Effect.FRAME_SKIP if operand else Effect.BREAK, name=node.attr)


class RequiresGradSet(Rule):
    """`p.requires_grad = flag` on a tensor (BYOL's `set_requires_grad(model, False)` over
    `model.parameters()`): dynamo does not trace the attribute's setter. Measured on torch 2.13 for
    parameters, inputs and intermediates, `True` or `False`, changed or not; the method
    `p.requires_grad_(False)` on a parameter traces."""

    code = "GM525"
    store_types = (ast.Attribute,)

    def check_store(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Attribute)
        if node.attr == "requires_grad" and is_tensor(ctx.kind(node.value)) and ctx.kind(node.value) is not Kind.RANDOM_NUMBER:
            ctx.report(self, node)


class BufferReassignedToItself(Rule):
    """`self.pos = self.pos.to(device=..., dtype=...)` where `self.pos = nn.Buffer(...)` in
    `__init__` (transformers 5.23.0's CTRL): when the conversion changes nothing it returns the
    buffer object itself, and storing that back reads the buffer marker's `persistent` flag, which
    dynamo does not trace ("Unsupported python_type() call"; measured on torch 2.13 for `.to`,
    `.float()` and `.contiguous()`; `register_buffer` buffers and new tensors do not break)."""

    code = "GM520"
    statement_types = (ast.Assign,)
    may_return_self = frozenset({"to", "type", "float", "double", "half", "bfloat16", "contiguous", "cpu", "cuda"})

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Assign)
        value = node.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in self.may_return_self):
            return
        source = value.func.value
        for target in node.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(source, ast.Attribute)
                and target.attr == source.attr
                and ast.dump(target.value) == ast.dump(source.value)
                and ctx.torch_module_class(target) == "Buffer"
            ):
                ctx.report(self, node, name=target.attr, method=value.func.attr)
                return


class TensorResize(Rule):
    """`buf.resize_(n)` and `buf.resize_as_(x)`: dynamo has no rule for resizing a tensor in place
    (measured on torch 2.13 for a new tensor, a global buffer, an input, and a resize to the size
    the tensor already has). The receiver may be of unknown kind (fairseq's
    `buffered_arange.buf.resize_(max)`, a cache kept on a function): the trailing underscore of
    these names is torch's mark of an in-place method, so only receivers known to be something
    other than a tensor (a module, a Python value) are left out."""

    code = "GM527"
    methods = frozenset({"resize_", "resize_as_"})
    _not_tensors = frozenset({Kind.NONE, Kind.PY, Kind.PY_SEQ, Kind.MODULE, Kind.MODULES, Kind.LOGGER, Kind.JIT, Kind.LOCK, Kind.GENERATOR, Kind.PY_RNG, Kind.SPARSE})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        held = receiver(node)
        if held is not None and ctx.kind(held) not in self._not_tensors and ctx.qualname(held) is None:
            ctx.report(self, node)


class MissingOptionalImport(Rule):
    """`try: from flash_attn_interface import f` / `except ImportError:` inside compiled code: an
    optional dependency probed while tracing. Dynamo runs the import itself, and where it raises
    it logs "Import failure" and skips the whole frame (measured on torch 2.13 for `import m`,
    `import m.sub as s` and `from m import f`, before and after traced ops); an import that
    succeeds (an installed module, loaded or not) traces. Whether it raises is a fact of the
    environment, so the rule asks the import system, without importing anything, whether the
    top-level package can be found here: only a package missing from this environment fires.
    Unguarded imports are left out (the program then fails eagerly too), and so are relative
    imports and a missing name or submodule of an installed package (finding those would import it)."""

    code = "GM530"
    statement_types = (ast.Try,)
    # Handlers that catch a failed import, so that the program runs eagerly without the package.
    _catching = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Try)
        if not any(self._catches(handler) for handler in node.handlers):
            return
        for stmt in node.body:
            module = next((m for m in _imported_top_level(stmt) if _missing(m)), None)
            if module is not None:
                ctx.report(self, stmt, effect=self._cost(ctx), module=module)
                return  # the first failing import skips the frame: later ones are never reached

    @staticmethod
    def _cost(ctx: RuleContext) -> Effect:
        """In the compiled function itself dynamo skips the frame. In a helper it breaks the graph at
        the call (what that costs the caller, in a loop say, is the walker's) and logs nothing
        more: unlike a break inside a helper's `try` (`.item()`), the helper is then not a frame
        dynamo reports skipping (measured, plain and `functools.cache` helpers)."""
        return Effect.FRAME_SKIP if ctx.is_entry else Effect.BREAK

    def _catches(self, handler: ast.ExceptHandler) -> bool:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return any(isinstance(t, ast.Name) and t.id in self._catching for t in types)


def _imported_top_level(stmt: ast.stmt) -> list[str]:
    """The top-level packages an absolute import statement loads, in order; none for others."""
    if isinstance(stmt, ast.Import):
        return [alias.name.partition(".")[0] for alias in stmt.names]
    if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
        return [stmt.module.partition(".")[0]]
    return []


def _missing(module: str) -> bool:
    """True when no top-level package of this name can be found (find_spec of a top-level name
    imports nothing)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return False


# Methods of a bytes value dynamo has no rule for: all but `decode` (its constant-folding covers
# str methods and bytes.decode only). Class-level constructors (`fromhex`, `maketrans`) are called
# on `bytes`, not on a value.
_BYTES_METHODS = frozenset(m for m in vars(bytes) if not m.startswith("_") and m not in {"decode", "fromhex", "maketrans"})


class BytesMethod(Rule):
    """`text.encode("utf-8").replace(b"[S1]", b"\\x01")` in compiled code: dynamo folds str methods
    and `bytes.decode` as constants but has no rule for any other bytes method (measured on torch
    2.13: replace, upper, split, startswith; `encode`, `decode`, `len`, `list`, `+` trace). A value
    is taken for bytes only where the code says so: a bytes literal, `.encode(<codec name>)` (a
    tokenizer's `encode("some text")` names no codec) or a string literal's `.encode()`, or a local
    name bound once, in this function, to one of those."""

    code = "GM531"
    methods = _BYTES_METHODS

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        held = receiver(node)
        if held is not None and _is_bytes(held, ctx.function):
            ctx.report(self, node, method=node.func.attr if isinstance(node.func, ast.Attribute) else "")


def _is_bytes(node: ast.expr, function: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _bytes_names(function)
    return _makes_bytes(node)


def _makes_bytes(node: ast.expr) -> bool:
    """A bytes literal, or an `encode` call that is certainly str.encode."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bytes)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "encode"):
        return False
    if isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
        return True
    encoding = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "encoding"), None)
    return isinstance(encoding, ast.Constant) and isinstance(encoding.value, str) and _is_codec(encoding.value)


def _is_codec(name: str) -> bool:
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


@functools.lru_cache(maxsize=32)
def _bytes_names(function: ast.AST) -> frozenset[str]:
    """Names bound once in `function`, by a plain assignment, to bytes. Any other binding (a
    parameter, a loop target, an augmented assignment, a second assignment) leaves a name out.
    Computed once per function: the methods hooked are common names."""
    arguments = function.args if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None
    params = {a.arg for a in walk(arguments) if isinstance(a, ast.arg)} if arguments is not None else set()
    return frozenset(
        name
        for name, values in plain_assignments(function).items()
        if values is not None and len(values) == 1 and name not in params and _makes_bytes(values[0])
    )
