"""Which expressions are tensors: a light, flow-sensitive abstract interpretation over `ast`.

`Evaluator.visit(expr)` returns the `Kind` of an expression, given `env` (the kinds of local
names at this point of the function). It is deliberately small and certain rather than clever:
torch API results, tensor methods, arithmetic and comparisons on tensors, annotated parameters,
`self.<submodule>(...)`, indexing, unpacking. Anything else is UNKNOWN, and rules never fire on
UNKNOWN alone.

The walker subclasses the evaluator and overrides the hooks (`on_expr`, `on_truth`, `on_call`) so
that inference and rule checks happen in the same single pass over the compiled code.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from ..astwalk import child_nodes, walk
from . import torch_api
from .constructions import constructed_attr_kind
from .guards import Given, static_truth
from .kinds import BOOL_KINDS, MAYBE_PYTHON_KINDS, NON_TENSOR_KINDS, SCALAR_KINDS, TENSOR_KINDS, Kind, join, maybe_python, tensor_kind
from .param_evidence import NOT_A_TENSOR_NAME, NUMBER_ARGUMENT_FUNCTIONS
from .super_properties import is_property_getter, property_names
from .symbols import (
    DISABLE_FUNCTIONS,
    JIT_SCRIPT_FUNCTIONS,
    LOCK_CLASSES,
    LOGGER_FACTORY_SUFFIXES,
    SCALAR_FLAG,
    SPARSE_CONSTRUCTORS,
    SPARSE_METHODS,
    ClassInfo,
    ModuleIndex,
    annotation_kind,
    import_bindings,
)

# ---------------------------------------------------------------------------------------------
# Facts about torch.Tensor methods and attributes (return kinds). Checked against torch 2.13.
# ---------------------------------------------------------------------------------------------
TENSOR_VALUED_ATTRS = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag", "_base"})
# Fields of the named tuples that `max(dim=)`, `min(dim=)`, `sort`, `topk`, `kthvalue`, `mode`,
# `median(dim=)` return: the analysis gives such a call the kind of a tensor, and `.values` read
# without a call is the field (a sparse tensor's `values` is a method, called).
NAMED_TUPLE_FIELDS = frozenset({"values", "indices"})
PY_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "nelement", "element_size", "item", "tolist", "data_ptr",
        "stride", "storage_offset", "is_contiguous", "is_floating_point", "is_complex", "is_signed",
        "is_inference", "is_pinned", "is_shared", "is_set_to", "is_same_size", "is_nonzero", "equal",
        "allclose", "get_device", "has_names", "__len__", "is_conj", "is_neg", "dim_order", "backward",
    }
)
SEQ_METHODS = frozenset(
    {
        "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes",
        "unsafe_split", "unsafe_chunk", "sort", "topk", "kthvalue", "mode", "aminmax", "slogdet", "svd",
        "qr", "lu", "frexp", "cummax", "cummin", "histogram", "eig",
    }
)
# With no dim argument these reduce to a 0-d tensor; with one they keep dimensions or return
# (values, indices) pairs.
FULL_REDUCTIONS = frozenset(
    {
        "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "std", "var", "median",
        "nanmedian", "nansum", "nanmean", "count_nonzero", "all", "any", "logsumexp",
    }
)
PAIR_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})
ALWAYS_SCALAR = frozenset({"dot", "vdot", "trace", "det", "logdet"})
BOOL_METHODS = frozenset(
    {
        "eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal",
        "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_and", "logical_or",
        "logical_not", "logical_xor", "bool", "signbit", "isclose", "all", "any", "isin",
    }
)
# Methods that keep a boolean tensor boolean (views, copies, movement).
DTYPE_PRESERVING = frozenset(
    {
        "view", "reshape", "flatten", "unflatten", "unsqueeze", "squeeze", "expand", "expand_as", "transpose",
        "permute", "contiguous", "clone", "detach", "repeat", "t", "narrow", "select", "index_select", "flip",
        "roll", "tril", "triu", "cpu", "cuda", "masked_fill", "__getitem__", "movedim", "swapaxes", "gather",
        "repeat_interleave", "tile", "cumsum_", "diagonal", "view_as", "reshape_as", "requires_grad_",
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not_", "fill_", "zero_",
    }
)
# Methods that keep a 0-d tensor 0-d (elementwise).
ELEMENTWISE = frozenset(
    {
        "abs", "neg", "exp", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "float", "double", "half",
        "bfloat16", "long", "int", "short", "to", "type_as", "clone", "detach", "clamp", "clamp_min",
        "clamp_max", "clip", "round", "floor", "ceil", "trunc", "sigmoid", "relu", "tanh", "sin", "cos",
        "reciprocal", "pow", "add", "sub", "mul", "div", "square", "sign", "cpu", "cuda", "contiguous",
        "squeeze", "requires_grad_", "fill_", "zero_", "exp_", "add_", "sub_", "mul_", "div_",
    }
)
# torch.<name>(...) results that are not tensors.
TORCH_PY_FUNCTIONS = frozenset(
    {
        "is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero", "is_grad_enabled",
        "is_inference_mode_enabled", "is_autocast_enabled", "get_default_dtype", "numel", "equal", "allclose",
        "is_same_size", "result_type", "promote_types", "can_cast", "broadcast_shapes", "get_num_threads",
        "initial_seed", "seed", "are_deterministic_algorithms_enabled", "is_anomaly_enabled", "typename",
        "is_conj", "is_neg", "get_autocast_gpu_dtype", "get_autocast_cpu_dtype", "get_autocast_dtype",
        "is_warn_always_enabled", "get_float32_matmul_precision", "Size", "device", "dtype", "finfo", "iinfo",
        "Generator", "set_grad_enabled", "no_grad", "enable_grad", "inference_mode", "autocast",
        "manual_seed", "use_deterministic_algorithms", "set_default_dtype", "set_printoptions", "compile",
        "_assert", "_check", "_check_is_size", "_check_with", "sym_int", "sym_float", "sym_max", "sym_min",
        "cond", "vmap", "get_rng_state", "set_rng_state", "save", "load",
    }
)


def takes_tensor_argument(qualified: str) -> bool:
    """Whether passing a value to the torch function `qualified` (`torch.cat`, `torch.nn.functional.pad`)
    shows the value is a tensor: not a function of Python values (`torch.is_tensor`), one whose
    first argument is a size (`torch.zeros`) or a class (`torch.Size`)."""
    if not qualified.startswith("torch."):
        return False
    leaf = qualified.rsplit(".", 1)[1]
    return leaf not in TORCH_PY_FUNCTIONS and leaf not in NUMBER_ARGUMENT_FUNCTIONS and not leaf[:1].isupper()


TORCH_SEQ_FUNCTIONS = frozenset(
    {
        "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "meshgrid", "broadcast_tensors",
        "sort", "topk", "kthvalue", "mode", "aminmax", "std_mean", "var_mean", "slogdet", "lu", "frexp",
        "histogram", "cummax", "cummin", "split_with_sizes", "unique_consecutive",
    }
)
TORCH_BOOL_FUNCTIONS = frozenset(
    {
        "eq", "ne", "gt", "ge", "lt", "le", "greater", "less", "greater_equal", "less_equal", "not_equal",
        "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_and", "logical_or",
        "logical_not", "logical_xor", "isclose", "isin", "signbit", "all", "any",
    }
)
# Functions that join a sequence of tensors into one of their common dtype.
JOINING_FUNCTIONS = frozenset(f"torch.{name}" for name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"))
# torch functions that return something shaped and typed like their first tensor argument.
TORCH_LIKE_FIRST = frozenset({"zeros_like", "ones_like", "empty_like", "tril", "triu", "clone", "flip", "roll"})
TORCH_SCALAR_FUNCTIONS = frozenset({"dot", "vdot", "trace", "det", "logdet", "scalar_tensor"})
TORCH_TENSOR_SUBMODULES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torch.nn.init.")
TORCH_SEQ_SUBMODULE_FUNCTIONS = frozenset(
    {
        "torch.linalg.eigh", "torch.linalg.eig", "torch.linalg.svd", "torch.linalg.qr", "torch.linalg.slogdet",
        "torch.linalg.lu", "torch.linalg.lu_factor", "torch.linalg.lstsq", "torch.linalg.inv_ex",
        "torch.linalg.cholesky_ex", "torch.autograd.grad", "torch.nn.functional.multi_head_attention_forward",
    }
)
TENSOR_CLASSES = frozenset(
    {
        "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.IntTensor", "torch.DoubleTensor",
        "torch.HalfTensor", "torch.BFloat16Tensor", "torch.ByteTensor", "torch.nn.Parameter",
        "torch.nn.parameter.Parameter", "torch.nn.parameter.Buffer", "torch.nn.Buffer",
    }
)
# Classes an `isinstance` test names: plain Python values, and containers (which may hold
# tensors: no tensor themselves, but not plain values either).
PYTHON_VALUE_CLASSES = frozenset({*(f"builtins.{name}" for name in ("int", "float", "bool", "complex", "str", "bytes")), "numbers.Number"})
CONTAINER_CLASSES = frozenset(f"builtins.{name}" for name in ("tuple", "list", "dict", "set", "frozenset"))
SEQ_MODULE_CLASSES = frozenset({"LSTM", "GRU", "RNN", "LSTMCell", "MultiheadAttention"})
CONTAINER_MODULE_CLASSES = frozenset({"ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})
BOOL_DTYPES = frozenset({"torch.bool", "builtins.bool"})  # torch takes Python's `bool` as a dtype (`torch.ones(n, dtype=bool)`)
# Python random draws dynamo traces as torch RNG calls: the result is a 0-d tensor in the graph,
# fine in arithmetic but a data-dependent value wherever a Python number is needed.
TRACED_RANDOM_NUMBERS = frozenset({"random.randint", "random.uniform", "random.randrange"})
# NumPy calls dynamo traces as tensor ops (torch._numpy), even on Python numbers and lists: the
# result is a tensor in the graph, so `int(np.prod(list(x.size())))` or `if np.max(v) > 0` breaks
# as `.item()` would. Measured on torch 2.13 with `int(...)`/`float(...)` of each (tests/corpus/
# break_numpy_traced_as_tensors.py checks a sample). One-argument float ufuncs on Python numbers (`np.sqrt(n)`, `np.ceil`,
# `np.floor`, `np.round`, `np.log`, `np.exp`) are folded to constants instead and are not listed;
# neither is numpy.random (GM309 flags the draw itself).
NUMPY_TRACED_AS_TENSORS = frozenset(
    f"numpy.{name}"
    for name in (
        "prod", "sum", "mean", "std", "var", "max", "min", "amax", "amin", "argmax", "argmin", "cumsum",
        "cumprod", "array", "asarray", "arange", "linspace", "zeros", "ones", "dot", "maximum", "minimum",
        "clip", "abs", "power", "sign", "floor_divide", "count_nonzero",
    )
)

PY_BUILTINS = frozenset(
    {
        "len", "int", "float", "bool", "str", "repr", "isinstance", "issubclass", "hasattr", "callable", "id",
        "hash", "type", "format", "ord", "chr", "bin", "hex", "oct", "range", "enumerate", "zip", "dict", "set",
        "frozenset", "any", "all", "print", "input", "open", "vars", "dir", "globals", "locals",
    }
)
SEQ_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed"})


def _has_dim_argument(call: ast.Call, positional_is_dim: bool = True) -> bool:
    if positional_is_dim and call.args:
        return True
    return any(k.arg in ("dim", "axis") for k in call.keywords)


def _dtype_keyword(call: ast.Call, qualname: Callable[[ast.AST], str | None]) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "dtype":
            return qualname(keyword.value) or "?"
    return None


class EvaluationObserver(Protocol):
    """What the walker hears while the evaluator computes kinds: the evaluator only computes, the
    observer decides what a kind means for the graph (rules, calls to follow, nested scopes)."""

    def on_expr(self, node: ast.expr, kind: Kind) -> None:
        """Every expression of a hooked type, after its kind is known (post-order)."""

    def on_truth(self, node: ast.expr, kind: Kind, construct: str) -> None:
        """Every expression whose truth value Python asks for (`if`, `and`, `not`, ...)."""

    def on_call_target(self, call: ast.Call, arg_kinds: list[Kind], kw_kinds: dict[str, Kind]) -> None:
        """Calls, after their arguments are evaluated (the walker follows calls into callees)."""

    def on_property_read(self, call: ast.Call) -> None:
        """A read of a `@property` of a known class, as the call of its getter (`call.func` is
        the attribute read): the walker follows it like a call."""

    def on_nested_scope(self, node: ast.Lambda | ast.FunctionDef) -> None:
        """Lambdas (the walker analyses their bodies as part of the compiled code)."""

    def enter_comprehension(self, node: ast.expr) -> None:
        """Code after this point runs once per element."""

    def exit_comprehension(self, node: ast.expr) -> None:
        """Matches enter_comprehension."""

    def named_mask(self, node: ast.AST) -> bool:
        """Whether `node` is a parameter named as a boolean mask (`mask`, `padding_mask`) and never
        re-bound: the name is the only evidence of its dtype there is."""


class _Unobserved:
    """The observer of an evaluation nobody listens to (module-level and `__init__` facts)."""

    def on_expr(self, node: ast.expr, kind: Kind) -> None:
        pass

    def on_truth(self, node: ast.expr, kind: Kind, construct: str) -> None:
        pass

    def on_call_target(self, call: ast.Call, arg_kinds: list[Kind], kw_kinds: dict[str, Kind]) -> None:
        pass

    def on_property_read(self, call: ast.Call) -> None:
        pass

    def on_nested_scope(self, node: ast.Lambda | ast.FunctionDef) -> None:
        pass

    def enter_comprehension(self, node: ast.expr) -> None:
        pass

    def exit_comprehension(self, node: ast.expr) -> None:
        pass

    def named_mask(self, node: ast.AST) -> bool:
        return False


class Evaluator:
    """Computes the Kind of expressions inside one function (or at module level)."""

    def __init__(
        self,
        index: ModuleIndex,
        env: dict[str, Kind] | None = None,
        cls: ClassInfo | None = None,
        self_name: str | None = None,
        observer: EvaluationObserver | None = None,
        hooked_types: frozenset[type] = frozenset(),
    ) -> None:
        self.index = index
        self.env: dict[str, Kind] = env if env is not None else {}
        self.cls = cls
        self.self_name = self_name
        self.self_attrs: dict[str, Kind] = {}
        # parameters annotated with a class of this file (`cache: DecodeCache | None`): the class,
        # whose annotated fields say what `cache.next_index` holds (see instance_attr_kind)
        self.instance_params: dict[str, ClassInfo] = {}
        self.local_imports: dict[str, str] = {}
        self.kinds: dict[int, Kind] = {}
        self.truth_lines: dict[int, int] = {}  # tested value -> the line dynamo names for its jump (see visit_truth)
        # the calls of C tensor methods whose arguments are being visited, innermost last (see
        # FunctionWalker._enqueue_callee: a helper that breaks there breaks the caller again)
        self.tensor_method_calls: list[ast.Call] = []
        self._qualnames: dict[int, str | None] = {}
        self.dead = False  # set while visiting code dynamo never evaluates (short-circuited operands)
        # parameters every caller fixes with a constant (`square_dist=True`) or a value never None ->
        # (what they fix, the first line where the function may have rebound them): dynamo traces
        # a Python constant argument as that constant and takes one branch on it
        self.fixed_values: dict[str, tuple[Given, int]] = {}
        self.observer: EvaluationObserver = observer if observer is not None else _Unobserved()
        self._on_expr = self.observer.on_expr  # bound once: `visit` calls it for most nodes
        # Node types `on_expr` wants to see; calling a hook for every node would cost a third of
        # the walk on large files.
        self.hooked_types = hooked_types

    # -- name resolution -----------------------------------------------------------------------
    def qualname(self, node: ast.AST) -> str | None:
        key = id(node)
        if key in self._qualnames:
            return self._qualnames[key]
        result = self.index.qualname(node, self.env, self.local_imports)
        self._qualnames[key] = result
        return result

    def kind(self, node: ast.AST) -> Kind:
        """The kind computed for `node` in this pass (UNKNOWN if it was not visited)."""
        return self.kinds.get(id(node), Kind.UNKNOWN)

    def static_truth(self, test: ast.expr) -> bool | None:
        fixed: dict[str, Given] = {}
        line = getattr(test, "lineno", None)  # a node a rewrite built has none: nothing is known there
        if self.fixed_values and line is not None:
            fixed = {name: given for name, (given, until) in self.fixed_values.items() if line < until}
        return static_truth(test, self.qualname, fixed)

    def type_test(self, test: ast.expr) -> tuple[str, Kind, Kind] | None:
        """`isinstance(x, torch.Tensor)` (or `torch.is_tensor(x)`, negated or not) on a local name:
        the kinds `x` has where the test holds and where it does not. A tensor in one arm is none
        in the other (captum's `else: raise AssertionError("Target type %r ..." % target)` after
        `elif isinstance(target, torch.Tensor)` formats no tensor); `isinstance(x, (int, tuple))`
        makes `x` no tensor where it holds (a plain value, unless a container class is named)."""
        negated = False
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, not negated
        if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)) or test.keywords:
            return None
        name = test.args[0].id
        callee = self.qualname(test.func)
        if callee == "torch.is_tensor" and len(test.args) == 1:
            classes = ["torch.Tensor"]
        elif callee == "builtins.isinstance" and len(test.args) == 2:
            spec = test.args[1]
            parts = spec.elts if isinstance(spec, ast.Tuple) else [spec]
            classes = [self.qualname(p) or "?" for p in parts]
        else:
            return None
        current = self.env.get(name, Kind.UNKNOWN)
        not_tensor = Kind.UNKNOWN if current in TENSOR_KINDS else current
        if all(c in TENSOR_CLASSES for c in classes):
            inside, outside = (current if current in TENSOR_KINDS else Kind.TENSOR), not_tensor
        elif all(c in PYTHON_VALUE_CLASSES for c in classes):
            inside, outside = Kind.PY, current
        elif all(c in PYTHON_VALUE_CLASSES | CONTAINER_CLASSES for c in classes):
            # `isinstance(xs, (list, tuple))` of what was taken for a tensor (a compiled entry's
            # parameter): a container, whose items are taken for tensors in turn
            inside, outside = (Kind.TENSORS if current in TENSOR_KINDS else current), current
        else:
            return None
        return (name, outside, inside) if negated else (name, inside, outside)

    # -- visiting ------------------------------------------------------------------------------
    def visit(self, node: ast.expr) -> Kind:
        node_type = type(node)
        method = _DISPATCH.get(node_type)
        kind = method(self, node) if method is not None else self._visit_children(node)
        self.kinds[id(node)] = kind
        if node_type in self.hooked_types and not self.dead:
            self._on_expr(node, kind)
        return kind

    def _visit_children(self, node: ast.AST) -> Kind:
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                self.visit(child)
        return Kind.UNKNOWN

    def visit_truth(self, node: ast.expr, construct: str, owner_line: int = 0) -> Kind:
        """Visit an expression whose truth value is taken; `and`/`or`/`not` are looked through.

        `owner_line` is the line of the `if`, `while`, ternary or comprehension that tests it:
        CPython 3.11 gives the jump that line unless the tested value is a comparison, and dynamo
        names the jump's line. Where a tested value starts on another line (a black-formatted
        `if (\n    flag\n    and torch.isnan(loss)\n):`), `truth_lines` keeps the owner's line
        for the finding (measured on torch 2.13: tests/corpus/multiline_condition_*)."""
        if isinstance(node, ast.BoolOp):
            return self._visit_boolop(node, construct, owner_line)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.visit_truth(node.operand, "not" if construct == "boolop" else construct, owner_line)
            self.kinds[id(node)] = Kind.PY
            if not self.dead and ast.UnaryOp in self.hooked_types:
                self._on_expr(node, Kind.PY)
            return Kind.PY
        kind = self.visit(node)
        self.note_truth_line(node, owner_line)
        if not self.dead:
            self.observer.on_truth(node, kind, construct)
        return kind

    def note_truth_line(self, tested: ast.expr, owner_line: int) -> None:
        """Keep `owner_line` for `tested` where dynamo names it (see visit_truth)."""
        if owner_line and owner_line != tested.lineno and not isinstance(tested, ast.Compare):
            self.truth_lines[id(tested)] = owner_line

    def _visit_boolop(self, node: ast.BoolOp, construct: str, owner_line: int = 0) -> Kind:
        is_and = isinstance(node.op, ast.And)
        was_dead = self.dead
        result: Kind | None = None
        operands: list[Kind] = []
        last = len(node.values) - 1
        narrowings: dict[str, tuple[Kind | None, Kind]] = {}  # name -> (kind before the `and`/`or`, kind set)
        for position, value in enumerate(node.values):
            if position == last and construct == "boolop":
                kind = self.visit(value)  # the last operand's value is returned, not tested
            else:
                kind = self.visit_truth(value, construct, owner_line)
            result = kind if result is None else join(result, kind)
            operands.append(kind)
            truth = self.static_truth(value)
            if truth is not None and truth is not is_and:
                self.dead = True  # dynamo knows the result; later operands never run
            self._narrow_later_operands(value, is_and, narrowings)
        for name, (before, narrowed) in narrowings.items():
            if self.env.get(name) is narrowed:  # not rebound by a `:=` since
                if before is None:
                    del self.env[name]
                else:
                    self.env[name] = before
        self.dead = was_dead
        final = result or Kind.UNKNOWN
        if final is Kind.UNKNOWN and construct == "boolop":
            # `c = self.flag and torch.any(m)`: the tensor where the Python operands let it through
            # (testing `c` then breaks, as `if self.flag and torch.any(m):` does), else a Python value
            if any(k in TENSOR_KINDS for k in operands) and all(k in TENSOR_KINDS or k in NON_TENSOR_KINDS for k in operands):
                final = Kind.TENSOR_OR_NUMBER
        self.kinds[id(node)] = final
        if not self.dead and ast.BoolOp in self.hooked_types:
            self._on_expr(node, final)
        return final

    def _narrow_later_operands(self, operand: ast.expr, is_and: bool, narrowings: dict[str, tuple[Kind | None, Kind]]) -> None:
        """After `isinstance(x, int) and`, the later operands run only where `x` is an int, and after
        `isinstance(x, Tensor) or` only where it is none (as pyright narrows): torchmetrics'
        `isinstance(thresholds, int) and thresholds < 2` compares a Python int, which dynamo
        knows, although `thresholds` may be a tensor elsewhere. `narrowings` records the kind each
        narrowed name had before, for the caller to restore after the whole `and`/`or`."""
        narrowed = self.type_test(operand)
        if narrowed is None:
            return
        name, inside, outside = narrowed
        kind = inside if is_and else outside
        if name not in narrowings:
            narrowings[name] = (self.env.get(name), kind)
        else:
            narrowings[name] = (narrowings[name][0], kind)
        self.env[name] = kind

    # -- leaves --------------------------------------------------------------------------------
    def _name(self, node: ast.Name) -> Kind:
        name = node.id
        kind = self.env.get(name)
        if kind is not None:
            return kind
        if name == self.self_name and self.cls is not None:
            return Kind.MODULE if self.cls.is_module else Kind.UNKNOWN
        if name in self.index.global_kinds:
            return self.index.global_kinds[name]
        function = self.index.functions.get(name)
        if function is not None:
            if id(function) in self.index.disabled:
                return Kind.DISABLED
        return Kind.UNKNOWN

    def _constant(self, node: ast.Constant) -> Kind:
        return Kind.NONE if node.value is None else Kind.PY

    def _joined_str(self, node: ast.JoinedStr) -> Kind:
        self._visit_children(node)
        return Kind.PY

    # -- attributes and subscripts --------------------------------------------------------------
    def _attribute(self, node: ast.Attribute) -> Kind:
        base = self.visit(node.value)
        attr = node.attr
        if base not in TENSOR_KINDS and isinstance(node.ctx, ast.Load):
            read = self._property_read(node)
            if read is not None:
                return read
        if base in TENSOR_KINDS:
            if attr in TENSOR_VALUED_ATTRS:
                return Kind.TENSOR if attr != "data" else base
            if attr in NAMED_TUPLE_FIELDS:
                return Kind.BOOL if attr == "values" and base in BOOL_KINDS else Kind.TENSOR
            if attr in torch_api.TENSOR_ATTRIBUTES:
                return Kind.PY
            if attr in torch_api.TENSOR_METHODS and attr not in torch_api.PYTHON_TENSOR_METHODS:
                return Kind.TENSOR_METHOD  # read, not called here (a call goes through `_attribute_of`)
            return Kind.UNKNOWN
        if base is Kind.TENSORS and attr in NAMED_TUPLE_FIELDS:
            return Kind.TENSOR  # `torch.max(x, dim=1).values`: a list or tuple has no such attribute
        if isinstance(node.value, ast.Name) and node.value.id in self.instance_params:
            return self.instance_attr_kind(self.instance_params[node.value.id], attr)
        if isinstance(node.value, ast.Name) and node.value.id == self.self_name and self.cls is not None:
            if base is Kind.MODULE:
                return self.self_attr_kind(attr)
            # a plain class (a scheduler, a sampler): the tensors its `__init__` sets up
            if attr in self.self_attrs:
                return self.self_attrs[attr]
            found = self._attr_or_constructed(self.cls, attr)
            return found if found in TENSOR_KINDS else Kind.UNKNOWN
        return Kind.UNKNOWN

    def _property_read(self, node: ast.Attribute) -> Kind | None:
        """`self.size`, where `size` is a `@property` of the walked class, or `obj.size` for an
        instance of a known class of the file: dynamo runs the getter there, so the observer hears
        it as a call (a break in the getter is reached from here: torchtune's `KVCache.size`
        returns `self.cache_pos[0].item()`); the read gives what the getter returns."""
        if node.attr not in property_names(self.index):
            return None  # the usual case: no class of the file has a property of that name
        holders = self.held_classes(node.value)
        getters = [(getter, info) for info in holders if (getter := self.index.method(info, node.attr)) is not None and is_property_getter(getter)]
        if not getters or len(getters) != len(holders):
            return None
        if not self.dead:
            calls = self.index.property_calls
            if id(node) not in calls:  # kept: the walk's memos are keyed by id() of the call
                calls[id(node)] = ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node)
            self.observer.on_property_read(calls[id(node)])
        kinds = {self.returned_kind(getter, self.index.owner.get(id(getter), info)) for getter, info in getters}
        return kinds.pop() if len(kinds) == 1 else Kind.UNKNOWN

    def held_classes(self, value: ast.expr) -> list[ClassInfo]:
        """The in-file classes `value` holds an instance of: `self` (the walked class), a local or
        parameter known to hold one, or an attribute chain from those (`self.attn.kv_cache`)."""
        if isinstance(value, ast.Name):
            if value.id == self.self_name:
                return [self.cls] if self.cls is not None else []
            return self.instance_classes_of(value)
        if isinstance(value, ast.Attribute):
            return [held for info in self.held_classes(value.value) for held in self.index.attr_classes_of(info, value.attr)]
        return []

    def _attr_or_constructed(self, info: ClassInfo, attr: str) -> Kind | None:
        """What `__init__` sets `self.<attr>` up as; where it copies a parameter whose kind it does
        not tell, the kind the file's constructions of the class pass (constructions.py)."""
        found = self.index.attr_kind(info, attr)
        # plain classes only: a module's `self.config = config` is built from a name, never a tensor,
        # and asking would walk every model file
        if found in (None, Kind.UNKNOWN) and info.attr_params and not info.is_module:
            return constructed_attr_kind(self.index, info, attr) or found
        return found

    def instance_attr_kind(self, info: ClassInfo, attr: str) -> Kind:
        """The kind of `attr` of an instance of the in-file class `info`: its annotation in the
        class body (a dataclass field, `next_index: torch.Tensor`), else what `__init__` sets up
        when that is a tensor; unknown otherwise."""
        for stmt in info.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
                return annotation_kind(stmt.annotation, self.index)
        found = self._attr_or_constructed(info, attr)
        return found if found in TENSOR_KINDS else Kind.UNKNOWN

    def self_attr_kind(self, attr: str) -> Kind:
        if attr in self.self_attrs:
            return self.self_attrs[attr]
        if self.cls is None:
            return Kind.UNKNOWN
        if attr == "training":
            return Kind.PY
        if attr in ("weight", "bias") and self.cls.is_module and attr not in self.cls.attr_kinds:
            return Kind.UNKNOWN
        found = self._attr_or_constructed(self.cls, attr)
        if found is not None:
            return found
        method = self.index.method(self.cls, attr)
        if method is not None:
            if id(method) in self.index.disabled:
                return Kind.DISABLED
        return Kind.UNKNOWN

    def _subscript(self, node: ast.Subscript) -> Kind:
        base = self.visit(node.value)
        index_kind = self.visit(node.slice)
        is_slice = isinstance(node.slice, ast.Slice)
        if base in TENSOR_KINDS:
            if index_kind in BOOL_KINDS:
                return Kind.BOOL if base in BOOL_KINDS else Kind.TENSOR
            return Kind.BOOL if base in BOOL_KINDS else Kind.TENSOR
        if base is Kind.TENSORS:
            return Kind.TENSORS if is_slice else Kind.TENSOR
        if base in (Kind.PY, Kind.PY_SEQ):
            return Kind.PY_SEQ if is_slice and base is Kind.PY_SEQ else Kind.PY
        if base is Kind.MODULES:
            return Kind.MODULES if is_slice else Kind.MODULE
        return Kind.UNKNOWN

    def _slice(self, node: ast.Slice) -> Kind:
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.visit(part)
        return Kind.PY

    # -- operators ------------------------------------------------------------------------------
    def _binop(self, node: ast.BinOp) -> Kind:
        left = self.visit(node.left)
        right = self.visit(node.right)
        kind = binop_kind(left, right, node.op)
        if kind is Kind.TENSOR and isinstance(node.op, _BOOL_PRESERVING_OPS):
            # `mask & (x > 0)`, with `mask` a parameter named as a mask: a boolean mask too
            named = [self.observer.named_mask(side) for side in (node.left, node.right)]
            if (named[0] and right in BOOL_KINDS) or (named[1] and left in BOOL_KINDS) or all(named):
                return Kind.BOOL
        return kind

    def _unaryop(self, node: ast.UnaryOp) -> Kind:
        if isinstance(node.op, ast.Not):
            self.visit_truth(node.operand, "not")
            return Kind.PY
        operand = self.visit(node.operand)
        if operand in MAYBE_PYTHON_KINDS:
            return operand
        if operand in TENSOR_KINDS:
            if isinstance(node.op, ast.Invert):
                return operand
            return tensor_kind(boolean=False, scalar=operand in SCALAR_KINDS)
        return Kind.PY if operand is Kind.PY else Kind.UNKNOWN

    def _compare(self, node: ast.Compare) -> Kind:
        kinds = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return Kind.PY
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)) and any(_is_text(o) for o in [node.left, *node.comparators]):
            return Kind.PY  # `normalize_type == "per_feature"`: a tensor is never equal to a str (False, not a tensor)
        eager_python = maybe_python(kinds)
        if eager_python is not None:
            return eager_python  # `random.uniform(0, 1) < p`: a Python bool when run eagerly
        if any(k in TENSOR_KINDS for k in kinds):
            scalar = all(k in SCALAR_KINDS or k is Kind.PY for k in kinds)
            return tensor_kind(boolean=True, scalar=scalar)
        if all(k in (Kind.PY, Kind.NONE, Kind.PY_SEQ) for k in kinds):
            return Kind.PY
        return Kind.UNKNOWN

    def _boolop(self, node: ast.BoolOp) -> Kind:
        return self._visit_boolop(node, "boolop")

    def _ifexp(self, node: ast.IfExp) -> Kind:
        truth = self.static_truth(node.test)
        self.visit_truth(node.test, "ternary", node.lineno)
        was_dead = self.dead
        if truth is False:
            self.dead = True
        body = self.visit(node.body)
        self.dead = was_dead or truth is True
        orelse = self.visit(node.orelse)
        self.dead = was_dead
        if truth is True:
            return body
        if truth is False:
            return orelse
        return join(body, orelse)

    def _named_expr(self, node: ast.NamedExpr) -> Kind:
        kind = self.visit(node.value)
        self.env[node.target.id] = kind
        return kind

    # -- containers -----------------------------------------------------------------------------
    def _sequence(self, node: ast.Tuple | ast.List | ast.Set) -> Kind:
        kinds = [self.visit(e) for e in node.elts]
        if not kinds:
            return Kind.PY_SEQ
        if all(k in TENSOR_KINDS or k is Kind.TENSORS for k in kinds):
            return Kind.TENSORS
        if all(k in (Kind.PY, Kind.NONE) for k in kinds):
            return Kind.PY_SEQ
        return Kind.UNKNOWN

    def _dict(self, node: ast.Dict) -> Kind:
        self._visit_children(node)
        return Kind.UNKNOWN

    def _starred(self, node: ast.Starred) -> Kind:
        return self.visit(node.value)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Kind:
        saved = dict(self.env)
        entered = False
        try:
            for _position, generator in enumerate(node.generators):
                # The first iterable is evaluated once, outside; everything else runs per element.
                iter_kind = self.visit(generator.iter)
                self.bind(generator.target, element_kind(iter_kind, generator.iter, self), None)
                if not entered:
                    self.observer.enter_comprehension(node)
                    entered = True
                for condition in generator.ifs:
                    self.visit_truth(condition, "comprehension", node.lineno)
            if isinstance(node, ast.DictComp):
                self.visit(node.key)
                self.visit(node.value)
                return Kind.UNKNOWN
            element = self.visit(node.elt)
        finally:
            if entered:
                self.observer.exit_comprehension(node)
            self.env = saved
        if element in TENSOR_KINDS:
            return Kind.TENSORS
        return Kind.PY_SEQ if element is Kind.PY else Kind.UNKNOWN

    def _lambda(self, node: ast.Lambda) -> Kind:
        if not self.dead:
            self.observer.on_nested_scope(node)
        return Kind.UNKNOWN

    def _await(self, node: ast.AST) -> Kind:
        self._visit_children(node)
        return Kind.UNKNOWN

    # -- calls ----------------------------------------------------------------------------------
    def _call(self, node: ast.Call) -> Kind:
        func = node.func
        receiver = Kind.UNKNOWN
        if isinstance(func, ast.Attribute):
            receiver = self.visit(func.value)
            # A method only tensors (and numpy arrays, which dynamo traces as tensors) have is
            # evidence that a value of unknown type is a tensor.
            if receiver is Kind.UNKNOWN and func.attr in torch_api.EVIDENCE_METHODS and self.qualname(func.value) is None:
                receiver = Kind.TENSOR
                self.kinds[id(func.value)] = receiver
                target = func.value
                if isinstance(target, ast.Name):
                    self.env[target.id] = receiver
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self.self_name:
                    self.self_attrs[target.attr] = receiver
            func_kind = self._attribute_of(func, receiver)
        else:
            func_kind = self.visit(func)
        self.kinds[id(func)] = func_kind
        method = (
            isinstance(func, ast.Attribute)
            and receiver in TENSOR_KINDS
            and receiver is not Kind.RANDOM_NUMBER
            and func.attr not in torch_api.PYTHON_TENSOR_METHODS
        )
        if method:
            self.tensor_method_calls.append(node)
        try:
            arg_kinds = [self.visit(a) for a in node.args]
            kw_kinds = {k.arg or "**": self.visit(k.value) for k in node.keywords}
        finally:
            if method:
                self.tensor_method_calls.pop()
        if not self.dead:
            self.observer.on_call_target(node, arg_kinds, kw_kinds)
        return self.call_result(node, func_kind, receiver, arg_kinds)

    def _attribute_of(self, func: ast.Attribute, receiver: Kind) -> Kind:
        """The kind of `receiver.attr` when it is about to be called (no re-visit of the receiver)."""
        if receiver is Kind.MODULE and isinstance(func.value, ast.Name) and func.value.id == self.self_name:
            return self.self_attr_kind(func.attr)
        if receiver is Kind.LOGGER:
            return Kind.LOGGER
        return Kind.UNKNOWN

    def _joins_booleans(self, call: ast.Call) -> bool:
        """`torch.cat([a, b])` / `torch.stack((a, b))` of boolean tensors only: the result is one too."""
        parts = call.args[0] if call.args else None
        if not isinstance(parts, (ast.List, ast.Tuple)) or not parts.elts:
            return False
        return all(self.kinds.get(id(part)) in BOOL_KINDS for part in parts.elts)

    def call_result(self, node: ast.Call, func_kind: Kind, receiver: Kind, arg_kinds: list[Kind]) -> Kind:
        func = node.func
        if isinstance(func, ast.Attribute) and receiver in TENSOR_KINDS:
            if func.attr in SPARSE_METHODS:
                return Kind.SPARSE
            if func.attr == "item" and SCALAR_FLAG in self.index.dynamo_flags:
                return Kind.SCALAR  # a traced symbolic number: branching on it still breaks
            return tensor_method_kind(func.attr, node, receiver, arg_kinds, self.qualname)
        if receiver is Kind.MODULE and isinstance(func, ast.Attribute) and func.attr in ("parameters", "buffers") and not node.args:
            return Kind.TENSORS  # `for p in model.parameters():` iterates tensors
        if func_kind in (Kind.MODULE, Kind.JIT):
            return Kind.TENSOR
        if receiver is Kind.GENERATOR and isinstance(func, ast.Attribute) and func.attr == "manual_seed":
            return Kind.GENERATOR  # returns the generator itself: `torch.Generator().manual_seed(0)`
        if receiver is Kind.PY_RNG and isinstance(func, ast.Attribute) and f"random.{func.attr}" in TRACED_RANDOM_NUMBERS:
            return Kind.RANDOM_NUMBER  # `random.Random(0).randint(1, 3)`, `self.rng.uniform(0, 1)`
        name = self.qualname(func)
        if name is not None:
            if name in DISABLE_FUNCTIONS and node.args:
                return Kind.DISABLED
            if name in JIT_SCRIPT_FUNCTIONS:
                return Kind.JIT if arg_kinds and arg_kinds[0] in (Kind.MODULE, Kind.MODULES) else Kind.UNKNOWN
            if name in LOCK_CLASSES:
                return Kind.LOCK
            if name == "torch.Generator":
                return Kind.GENERATOR
            if name in ("copy.deepcopy", "copy.copy") and len(arg_kinds) == 1 and arg_kinds[0] in (Kind.MODULE, Kind.MODULES, *TENSOR_KINDS):
                return arg_kinds[0]  # a copy of a module (BYOL's target network) or of a tensor
            if name == "random.Random":
                return Kind.PY_RNG
            if name in SPARSE_CONSTRUCTORS:
                return Kind.SPARSE
            if name in JOINING_FUNCTIONS and self._joins_booleans(node):
                return Kind.BOOL  # `torch.cat([mask, ~mask])` indexes as a mask, as its parts do
            if name.startswith("torch."):
                return torch_function_kind(name, node, arg_kinds, self.qualname)
            if name.startswith("builtins."):
                return builtin_kind(name[9:], arg_kinds)
            if name in TRACED_RANDOM_NUMBERS:
                return Kind.RANDOM_NUMBER
            if name in NUMPY_TRACED_AS_TENSORS:
                return Kind.TENSOR
            if name.endswith(LOGGER_FACTORY_SUFFIXES):
                return Kind.LOGGER
            return Kind.UNKNOWN
        if isinstance(func, ast.Name) and func.id not in self.env:
            function = self.index.functions.get(func.id)
            if function is not None:
                return self.returned_kind(function, None)
            info = self.index.classes.get(func.id)
            if info is not None and info.is_module:
                return Kind.MODULE
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in self.env:
            held = self.index.global_instances.get(func.value.id)  # `SPEC.is_in(x)`, SPEC = Bounds(...) at module level
            method = self.index.method(self.index.classes[held], func.attr) if held in self.index.classes else None
            if method is not None:
                return self.returned_kind(method, self.index.owner.get(id(method)))
        info = self._instance_of(func.value) if isinstance(func, ast.Attribute) else None
        if info is not None:
            # `_spec.is_in(x)` on an instance of a class of the file held in a local or parameter,
            # `module.spec.is_in(x)` on one held by such an instance
            assert isinstance(func, ast.Attribute)
            method = self.index.method(info, func.attr)
            if method is not None and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
                return self.returned_kind(method, self.index.owner.get(id(method)))
        if isinstance(func, ast.Attribute) and receiver is not Kind.MODULE and self.cls is not None and not self.cls.is_module:
            if isinstance(func.value, ast.Name) and func.value.id == self.self_name:
                # `self._select_target_keypoints(...)` in a plain class (ultralytics' losses)
                method = self.index.method(self.cls, func.attr)
                if method is not None:
                    return self.returned_kind(method, self.index.owner.get(id(method)))
        if isinstance(func, ast.Attribute) and receiver is Kind.MODULE and self.cls is not None:
            if isinstance(func.value, ast.Name) and func.value.id == self.self_name:
                method = self.index.method(self.cls, func.attr)
                if method is not None:
                    return self.returned_kind(method, self.index.owner.get(id(method)))
                plain = self.cls.attr_plain_functions.get(func.attr)
                if plain is not None:
                    return annotation_kind(plain.returns, self.index) if isinstance(plain, ast.FunctionDef) else Kind.UNKNOWN
                if func.attr in self.cls.attr_kinds or self.index.attr_kind(self.cls, func.attr) is not None:
                    return Kind.TENSOR  # a submodule or callable set up in __init__
        if isinstance(func, ast.Attribute) and receiver in (Kind.MODULE, Kind.UNKNOWN) and self.cls is not None:
            # `self.pe.encode(x)` on a submodule, `self.spec.is_in(x)` on a plain object of this file
            held_kind = self._held_method_kind(func)
            if held_kind is not None:
                return held_kind
        return Kind.UNKNOWN

    def instance_classes_of(self, value: ast.expr) -> list[ClassInfo]:
        """The classes of the file whose instance `value` may be, through a local or parameter
        known to hold one (not `self`, whose methods are looked up on the walked class): that
        name, or an attribute of it (`module.spec` in a hook the module registers on itself)."""
        if isinstance(value, ast.Name) and value.id != self.self_name and value.id in self.instance_params:
            return [self.instance_params[value.id]]
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in self.instance_params:
            return self.index.attr_classes_of(self.instance_params[value.value.id], value.attr)
        return []

    def _instance_of(self, value: ast.expr) -> ClassInfo | None:
        """The one class `instance_classes_of` finds, or None."""
        found = self.instance_classes_of(value)
        return found[0] if len(found) == 1 else None

    def _held_method_kind(self, func: ast.Attribute) -> Kind | None:
        """`self.pe.encode(x)` where `__init__` set `self.pe = PositionEncoding(...)`, a class of
        this file: what its `encode` returns (annotation or returns), where every class the
        attribute may hold agrees (SAM's `self.pe_layer.forward_with_coords(...)` -> a tensor)."""
        holder = func.value
        if self.cls is None or not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == self.self_name):
            return None
        if not self.cls.attr_classes.get(holder.attr):
            return None  # no class of this file held there (most `self.config.get(...)`): nothing to look up
        cache = self.index.set_outside_init
        if id(self.cls.node) not in cache:
            cache[id(self.cls.node)] = _set_outside_init(self.cls)
        outside = cache[id(self.cls.node)]
        if outside is None or holder.attr in outside:
            return None  # `self.pe = Table()` in another method: the class `__init__` set may not be the one held
        kinds: set[Kind] = set()
        for name in self.cls.attr_classes.get(holder.attr, ()):
            info = self.index.classes.get(name)
            method = self.index.method(info, func.attr) if info is not None else None
            if method is None or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
                return None
            kinds.add(self.returned_kind(method, self.index.owner.get(id(method))))
        return kinds.pop() if len(kinds) == 1 else None

    def returned_kind(self, function: ast.FunctionDef | ast.AsyncFunctionDef, cls: ClassInfo | None) -> Kind:
        """What calling an in-file function gives: its return annotation's kind, else the kind
        every one of its `return`s agrees on, its locals followed in source order (a helper
        ending in `return (x >= low).all()` returns a 0-d bool tensor, so `if not helper(x):`
        branches on a tensor). Unknown where a return is bare, or the returns disagree beyond
        one tensor kind; computed once per function."""
        declared = annotation_kind(self.index.returns(function), self.index)
        decorated = any(not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in function.decorator_list)
        if declared is not Kind.UNKNOWN or decorated or isinstance(function, ast.AsyncFunctionDef):
            return declared  # a decorator may change what a call gives (`torch.jit.script`: dynamo keeps it opaque)
        cache = self.index.inferred_returns
        if id(function) not in cache:
            cache[id(function)] = Kind.UNKNOWN  # a recursive helper asks again while this runs
            cache[id(function)] = _inferred_return(self.index, function, cls)
        return cache[id(function)]

    def _returned_elements(self, call: ast.Call, count: int) -> tuple[Kind, ...] | None:
        """The kinds of the elements a call of an in-file function or of this class's method returns,
        where every `return` of it is a tuple of `count` elements (YOLOX's `get_geometry_constraint`
        ends `return anchor_filter, geometry_relation`); None otherwise."""
        func = call.func
        function: ast.FunctionDef | None = None
        if isinstance(func, ast.Name) and func.id not in self.env:
            function = self.index.functions.get(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.self_name and self.cls is not None:
            function = self.index.method(self.cls, func.attr)
        plain = function is not None and all(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in function.decorator_list)
        if function is None or not plain:
            return None  # a decorator may change what a call gives
        cache = self.index.inferred_elements
        key = (id(function), count)
        if key not in cache:
            cache[key] = None  # a recursive helper asks again while this runs
            cache[key] = _inferred_elements(self.index, function, self.index.owner.get(id(function)), count)
        masks = cache[key]
        passes = self.index.passed_through.get(key)
        if passes is None:
            passes = self.index.passed_through[key] = _passed_through(function, count)
        if not any(passes):
            return masks
        positional = function.args.posonlyargs + function.args.args
        bound = isinstance(func, ast.Attribute) and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
        passed = passed_arguments(positional[1:] if bound else positional, call)
        kinds = list(masks or (Kind.UNKNOWN,) * count)
        for position, param in enumerate(passes):
            given = passed.get(param) if param is not None else None
            given_kind = self.kind(given) if given is not None else Kind.UNKNOWN
            if given_kind is Kind.UNKNOWN and isinstance(given, ast.Name):
                given_kind = self.env.get(given.id, Kind.UNKNOWN)  # narrowed by the call itself (walker)
            if kinds[position] is Kind.UNKNOWN and given_kind in TENSOR_KINDS:
                kinds[position] = given_kind  # `t` handed back as it came (or negated): its kind at the call
        return tuple(kinds) if any(k is not Kind.UNKNOWN for k in kinds) else None

    # -- binding --------------------------------------------------------------------------------
    def bind(self, target: ast.expr, kind: Kind | tuple, value: ast.expr | None) -> None:
        """Record the kinds of the names an assignment (or a `for` target) binds."""
        if isinstance(target, ast.Name):
            self.env[target.id] = kind if isinstance(kind, Kind) else Kind.UNKNOWN
            self.instance_params.pop(target.id, None)
            held = self._instance_of(value) if isinstance(value, ast.Attribute) else None
            if held is not None:  # `_spec = module.spec`: an instance of a class of the file
                self.instance_params[target.id] = held
        elif isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            if isinstance(kind, tuple) and len(kind) == len(elements):
                for element, element_kind_ in zip(elements, kind):
                    self.bind(element, element_kind_, None)
                return
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements) and not any(
                isinstance(e, ast.Starred) for e in value.elts
            ):
                for element, part in zip(elements, value.elts):
                    self.bind(element, self.kind(part), part)
                return
            elements_kinds = self._returned_elements(value, len(elements)) if isinstance(value, ast.Call) else None
            if elements_kinds is not None:  # `mask, rest = self.constraint(...)`, whose returns are `mask, rest`
                for element, element_kind_ in zip(elements, elements_kinds):
                    self.bind(element, element_kind_, None)
                return
            unpacked = unpack_kind(kind if isinstance(kind, Kind) else Kind.UNKNOWN)
            module_result = isinstance(value, ast.Call) and self.kind(value.func) is Kind.MODULE
            for element in elements:
                if module_result and isinstance(element, ast.Name) and NOT_A_TENSOR_NAME.search(element.id):
                    # `x, height, width = embedding(x)`: a module that returns several values
                    # returns a tuple of whatever it likes, and names like these are its sizes
                    # (pvt, segformer, timesformer); `logits, labels = head(...)` stay tensors
                    self.bind(element, Kind.UNKNOWN, None)
                elif isinstance(element, ast.Starred):
                    seq = Kind.TENSORS if unpacked in TENSOR_KINDS else Kind.PY_SEQ if unpacked is Kind.PY else Kind.UNKNOWN
                    self.bind(element.value, seq, None)
                else:
                    self.bind(element, unpacked, None)
        elif isinstance(target, ast.Attribute):
            if isinstance(target.value, ast.Name) and target.value.id == self.self_name and isinstance(kind, Kind):
                self.self_attrs[target.attr] = kind
        elif isinstance(target, ast.Starred):
            self.bind(target.value, kind, None)

    def add_import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        for local, target in import_bindings(stmt):
            self.local_imports[local] = target
            self.env.pop(local, None)


_DISPATCH: dict[type, Callable[[Evaluator, Any], Kind]] = {  # each handler takes its node type
    ast.Name: Evaluator._name,
    ast.Constant: Evaluator._constant,
    ast.JoinedStr: Evaluator._joined_str,
    ast.Attribute: Evaluator._attribute,
    ast.Subscript: Evaluator._subscript,
    ast.Slice: Evaluator._slice,
    ast.BinOp: Evaluator._binop,
    ast.UnaryOp: Evaluator._unaryop,
    ast.Compare: Evaluator._compare,
    ast.BoolOp: Evaluator._boolop,
    ast.IfExp: Evaluator._ifexp,
    ast.NamedExpr: Evaluator._named_expr,
    ast.Tuple: Evaluator._sequence,
    ast.List: Evaluator._sequence,
    ast.Set: Evaluator._sequence,
    ast.Dict: Evaluator._dict,
    ast.Starred: Evaluator._starred,
    ast.ListComp: Evaluator._comprehension,
    ast.SetComp: Evaluator._comprehension,
    ast.GeneratorExp: Evaluator._comprehension,
    ast.DictComp: Evaluator._comprehension,
    ast.Lambda: Evaluator._lambda,
    ast.Await: Evaluator._await,
    ast.Call: Evaluator._call,
}


# ---------------------------------------------------------------------------------------------
# Kind arithmetic, shared by the evaluator and the rules.
# ---------------------------------------------------------------------------------------------
_BOOL_PRESERVING_OPS = (ast.BitAnd, ast.BitOr, ast.BitXor)


def _is_text(node: ast.expr) -> bool:
    """A str or bytes literal, or an f-string."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def binop_kind(left: Kind, right: Kind, op: ast.operator) -> Kind:
    eager_python = maybe_python([left, right])
    if eager_python is not None:
        return eager_python
    left_tensor = left in TENSOR_KINDS
    right_tensor = right in TENSOR_KINDS
    if left_tensor or right_tensor:
        scalar = all(k in SCALAR_KINDS or k is Kind.PY for k in (left, right))
        boolean = isinstance(op, _BOOL_PRESERVING_OPS) and all(k in BOOL_KINDS or k is Kind.PY for k in (left, right))
        # `(y2 > y1) * (x2 > x1)` (torchvision's box losses): a product of two bool tensors is bool
        boolean = boolean or (isinstance(op, ast.Mult) and left in BOOL_KINDS and right in BOOL_KINDS)
        return tensor_kind(boolean=boolean, scalar=scalar)
    if left is Kind.PY and right is Kind.PY:
        return Kind.PY
    if left is Kind.TENSORS and right is Kind.TENSORS and isinstance(op, ast.Add):
        return Kind.TENSORS
    if {left, right} <= {Kind.PY, Kind.PY_SEQ}:
        return Kind.PY_SEQ if isinstance(op, (ast.Add, ast.Mult)) and Kind.PY_SEQ in (left, right) else Kind.PY
    return Kind.UNKNOWN


def unpack_kind(kind: Kind) -> Kind:
    """The kind of each element when `kind` is unpacked or iterated."""
    if kind in TENSOR_KINDS:
        return Kind.BOOL if kind in BOOL_KINDS else Kind.TENSOR
    if kind is Kind.TENSORS:
        return Kind.TENSOR
    if kind in (Kind.PY, Kind.PY_SEQ):
        return Kind.PY
    if kind in (Kind.MODULES, Kind.MODULE):
        return Kind.MODULE
    return Kind.UNKNOWN


def element_kind(iter_kind: Kind, node: ast.expr, evaluator: Evaluator) -> Kind | tuple:
    """What a `for` target receives from `node`; tuples for `enumerate(...)` and `zip(...)`,
    nested as they nest (`for i, (a, b) in enumerate(zip(xs, ys))`: `bind` unpacks each level)."""
    if isinstance(node, ast.Call):
        name = evaluator.qualname(node.func)
        if name == "builtins.range":
            return Kind.PY
        if name == "builtins.enumerate" and node.args:
            return (Kind.PY, element_kind(evaluator.kind(node.args[0]), node.args[0], evaluator))
        if name == "builtins.zip" and node.args and not any(isinstance(arg, ast.Starred) for arg in node.args):
            return tuple(element_kind(evaluator.kind(arg), arg, evaluator) for arg in node.args)
    return unpack_kind(iter_kind)


def moves_only(call: ast.Call) -> bool:
    """`.to(x.device)`, `.to("cuda")`, `.to(device=d, non_blocking=True)`: a copy to a device, same dtype."""
    device_keywords = {"device", "non_blocking", "copy", "memory_format"}
    if any(k.arg not in device_keywords for k in call.keywords) or len(call.args) > 1:
        return False
    if not call.args:
        return any(k.arg == "device" for k in call.keywords)
    device = call.args[0]
    return (isinstance(device, ast.Attribute) and device.attr == "device") or (
        isinstance(device, ast.Constant) and isinstance(device.value, str) and device.value.split(":")[0] in ("cpu", "cuda", "mps", "xpu", "meta")
    )


def tensor_method_kind(
    method: str, call: ast.Call, receiver: Kind, arg_kinds: list[Kind], qualname: Callable[[ast.AST], str | None]
) -> Kind:
    """The kind of `<tensor>.method(...)`."""
    if method in PY_METHODS:
        return Kind.NONE if method == "backward" else Kind.PY
    if method == "type":
        return Kind.TENSOR if call.args or call.keywords else Kind.PY
    if method in PAIR_WITH_DIM and call.args:
        return Kind.TENSOR if arg_kinds[0] in TENSOR_KINDS else Kind.TENSORS
    if method == "nonzero" and any(k.arg == "as_tuple" for k in call.keywords):
        return Kind.TENSORS
    if method in SEQ_METHODS:
        return Kind.TENSORS
    # an in-place method writes into the receiver and returns it: its dtype stays (`mask.fill_diagonal_(0)`)
    in_place = method.endswith("_") and not method.startswith("_")
    boolean = method in BOOL_METHODS or (receiver in BOOL_KINDS and (method in DTYPE_PRESERVING or in_place))
    if method in ("to", "type") and call.args:
        boolean = qualname(call.args[0]) in BOOL_DTYPES or (boolean and arg_kinds[0] is not Kind.PY)
    if method == "to" and receiver in BOOL_KINDS and moves_only(call):
        boolean = True  # `mask.to(x.device)` is still a mask
    if _dtype_keyword(call, qualname) in BOOL_DTYPES:
        boolean = True
    if method in FULL_REDUCTIONS:
        # `x.std(True)` is the old `unbiased` flag; `x.std(1)` a dimension, as is any non-literal
        positional_is_dim = method not in ("std", "var") or bool(
            call.args and not (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, bool))
        )
        scalar = not _has_dim_argument(call, positional_is_dim)
        return tensor_kind(boolean=method in ("all", "any"), scalar=scalar)
    if method == "norm":
        return tensor_kind(boolean=False, scalar=not (len(call.args) > 1 or any(k.arg == "dim" for k in call.keywords)))
    if method in ALWAYS_SCALAR:
        return Kind.SCALAR
    scalar = receiver in SCALAR_KINDS and method in ELEMENTWISE
    return tensor_kind(boolean=boolean, scalar=scalar)


def torch_function_kind(name: str, call: ast.Call, arg_kinds: list[Kind], qualname: Callable[[ast.AST], str | None]) -> Kind:
    """The kind of `torch.<...>(...)`."""
    if name in TENSOR_CLASSES:
        return Kind.TENSOR
    if name.startswith("torch.nn.") and not name.startswith(TORCH_TENSOR_SUBMODULES):
        leaf = name.rsplit(".", 1)[1]
        if leaf in CONTAINER_MODULE_CLASSES:
            return Kind.MODULES
        if leaf in torch_api.NN_MODULE_CLASSES:
            return Kind.MODULE
        return Kind.UNKNOWN
    if name in TORCH_SEQ_SUBMODULE_FUNCTIONS:
        return Kind.TENSORS
    if name.startswith(TORCH_TENSOR_SUBMODULES):
        # `F.softmax(...)`, not `F._Reduction.get_enum(...)`: a class's method there returns what it likes (an int)
        prefix = next(p for p in TORCH_TENSOR_SUBMODULES if name.startswith(p))
        return Kind.UNKNOWN if "." in name[len(prefix) :] else Kind.TENSOR
    if name.count(".") != 1:
        return Kind.UNKNOWN  # torch.cuda.*, torch.jit.*, torch.distributed.*, ...
    leaf = name[6:]
    if leaf in TORCH_PY_FUNCTIONS:
        return Kind.PY
    if leaf not in torch_api.TORCH_FUNCTIONS:
        return Kind.UNKNOWN
    if leaf in TORCH_SEQ_FUNCTIONS:
        return Kind.TENSORS
    if leaf in ("max", "min", "median", "nanmedian") and len(call.args) > 1:
        return Kind.TENSOR if arg_kinds[1] in TENSOR_KINDS else Kind.TENSORS
    if leaf in ("max", "min", "median", "nanmedian") and any(k.arg == "dim" for k in call.keywords):
        return Kind.TENSORS
    if leaf == "where":
        if len(call.args) == 1 and not call.keywords:
            return Kind.TENSORS
        if len(arg_kinds) == 3:
            a, b = arg_kinds[1], arg_kinds[2]
            boolean = a in BOOL_KINDS and b in BOOL_KINDS
            return tensor_kind(boolean=boolean, scalar=all(k in SCALAR_KINDS or k is Kind.PY for k in arg_kinds))
        return Kind.TENSOR
    if leaf == "nonzero" and any(k.arg == "as_tuple" for k in call.keywords):
        return Kind.TENSORS
    if leaf == "unique" and any(k.arg in ("return_inverse", "return_counts") for k in call.keywords):
        return Kind.TENSORS
    boolean = leaf in TORCH_BOOL_FUNCTIONS or _dtype_keyword(call, qualname) in BOOL_DTYPES
    if leaf in TORCH_LIKE_FIRST and arg_kinds and arg_kinds[0] in BOOL_KINDS and _dtype_keyword(call, qualname) is None:
        boolean = True
    if leaf in FULL_REDUCTIONS:
        extra_args = len(call.args) > 1 or any(k.arg in ("dim", "axis") for k in call.keywords)
        return tensor_kind(boolean=leaf in ("all", "any"), scalar=not extra_args)
    if leaf in TORCH_SCALAR_FUNCTIONS:
        return Kind.SCALAR
    if leaf in ("tensor", "as_tensor") and call.args and isinstance(call.args[0], ast.Constant):
        return tensor_kind(boolean=isinstance(call.args[0].value, bool) or boolean, scalar=True)
    if leaf in ("tensor", "as_tensor") and call.args and _dtype_keyword(call, qualname) is None and _bool_display(call.args[0]):
        return Kind.BOOL  # `torch.tensor([True], device=d)`: torch infers torch.bool (torchmetrics' `_find_repeats`)
    tensor_args = [k for k in arg_kinds if k in TENSOR_KINDS]
    scalar = bool(tensor_args) and all(k in SCALAR_KINDS for k in tensor_args) and leaf in ELEMENTWISE
    return tensor_kind(boolean=boolean, scalar=scalar)


def builtin_kind(name: str, arg_kinds: list[Kind]) -> Kind:
    if name in PY_BUILTINS:
        return Kind.NONE if name == "print" else Kind.PY
    if name in SEQ_BUILTINS:
        if arg_kinds and (arg_kinds[0] in TENSOR_KINDS or arg_kinds[0] is Kind.TENSORS):
            return Kind.TENSORS
        if arg_kinds and arg_kinds[0] in (Kind.PY_SEQ, Kind.PY):
            return Kind.PY_SEQ
        return Kind.UNKNOWN
    if name in ("min", "max"):
        if len(arg_kinds) == 1:
            return Kind.TENSOR if arg_kinds[0] in (Kind.TENSORS, Kind.TENSOR) else Kind.UNKNOWN
        if any(k in TENSOR_KINDS for k in arg_kinds):
            return tensor_kind(boolean=False, scalar=all(k in SCALAR_KINDS or k is Kind.PY for k in arg_kinds))
        return Kind.PY if all(k is Kind.PY for k in arg_kinds) else Kind.UNKNOWN
    if name == "sum" and arg_kinds:
        return Kind.TENSOR if arg_kinds[0] in (Kind.TENSORS, Kind.TENSOR) else Kind.UNKNOWN
    if name in ("abs", "round", "pow") and arg_kinds:
        return arg_kinds[0] if arg_kinds[0] in TENSOR_KINDS else Kind.PY if arg_kinds[0] is Kind.PY else Kind.UNKNOWN
    return Kind.UNKNOWN


def _returns_in_order(index: ModuleIndex, function: ast.FunctionDef, cls: ClassInfo | None) -> Iterator[tuple[Evaluator, ast.Return | None]]:
    """`function`'s own statements in source order, each name's kind the last assignment's,
    control flow ignored: at each `return`, the evaluator and the return; at a `yield`, (evaluator,
    None) (a generator returns no value its returns say)."""
    positional = function.args.posonlyargs + function.args.args
    bound = cls is not None and positional and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    evaluator = Evaluator(index, {}, cls, positional[0].arg if bound else None)
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            evaluator.bind(node.targets[0], evaluator.visit(node.value), node.value)
            continue
        if isinstance(node, ast.Return):
            yield evaluator, node
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            yield evaluator, None
            return
        stack.extend(reversed(child_nodes(node)))


def _inferred_return(index: ModuleIndex, function: ast.FunctionDef, cls: ClassInfo | None) -> Kind:
    """The kind `function`'s returns agree on (see Evaluator.returned_kind), from `_returns_in_order`."""
    found: Kind | None = None
    for evaluator, returned in _returns_in_order(index, function, cls):
        if returned is None:
            return Kind.UNKNOWN
        kind = evaluator.visit(returned.value) if returned.value is not None else Kind.NONE
        if kind not in TENSOR_KINDS:
            return Kind.UNKNOWN
        found = kind if found is None else join(found, kind)
    return found if found is not None else Kind.UNKNOWN


def _inferred_elements(index: ModuleIndex, function: ast.FunctionDef, cls: ClassInfo | None, count: int) -> tuple[Kind, ...] | None:
    """Which elements of `function`'s returns are boolean tensors (masks), where every return is a
    tuple of `count` plain elements (no starred) and the element is a boolean tensor on each; the
    others unknown. None where a return is anything else or the function yields.

    Only masks: the other elements' kinds come from locals followed in source order with control
    flow ignored, and a call resolved to several classes (`self.self(...)` holding BigBird's full
    or block-sparse attention) can hand them to parameters of another meaning; a mask is what a
    caller indexes with or tests."""
    masks: list[bool] | None = None
    for evaluator, returned in _returns_in_order(index, function, cls):
        value = returned.value if returned is not None else None
        if not isinstance(value, ast.Tuple) or len(value.elts) != count or any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        here = [evaluator.visit(e) is Kind.BOOL for e in value.elts]
        masks = here if masks is None else [a and b for a, b in zip(masks, here)]
    if masks is None or not any(masks):
        return None
    return tuple(Kind.BOOL if mask else Kind.UNKNOWN for mask in masks)


def passed_arguments(params: list[ast.arg], call: ast.Call) -> dict[str, ast.expr]:
    """The expression `call` passes for each parameter of `params` (a bound method's without
    `self`): positional arguments up to the first `*args`, then keywords."""
    passed: dict[str, ast.expr] = {}
    for param, arg in zip(params, call.args):
        if isinstance(arg, ast.Starred):
            break
        passed[param.arg] = arg
    passed.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return passed


# Methods whose result has the kind of the tensor they are called on (a rebinding `t = t.clone()`
# keeps a parameter handed back "as it came").
_KIND_KEEPING_METHODS = frozenset({"clone", "contiguous", "detach", "flip", "neg"})


def _passed_through(function: ast.FunctionDef, count: int) -> tuple[str | None, ...]:
    """For each element of `function`'s returns (each a tuple of `count` plain elements), the
    parameter it hands back, where every return has that parameter's name there and the function
    rebinds it, if at all, only to itself negated or through a kind-keeping method (torchdiffeq's
    `_check_inputs` ends `return func, y0, t` after `if t_is_reversed: t = -t`): a caller's
    `func, y0, t = _check_inputs(func, y0, t)` then gets back the kinds it passed. None where an
    element is anything else."""
    params = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    names: list[str | None] | None = None
    for node in own_nodes(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return (None,) * count
        if not isinstance(node, ast.Return):
            continue
        value = node.value
        if not isinstance(value, ast.Tuple) or len(value.elts) != count or any(isinstance(e, ast.Starred) for e in value.elts):
            return (None,) * count
        here = [e.id if isinstance(e, ast.Name) and e.id in params else None for e in value.elts]
        names = here if names is None else [a if a == b else None for a, b in zip(names, here)]
    if names is None:
        return (None,) * count
    rebound = _rebinding_values(function)
    return tuple(name if name is not None and all(_keeps_kind(v, name) for v in rebound.get(name, ())) else None for name in names)


def _bool_display(node: ast.expr) -> bool:
    """A list or tuple display, nested or not, of `True`/`False` literals only: the data from which
    `torch.tensor` infers the dtype torch.bool."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool)
    return isinstance(node, (ast.List, ast.Tuple)) and bool(node.elts) and all(_bool_display(e) for e in node.elts)


def plain_assignments(function: ast.AST) -> dict[str, list[ast.expr] | None]:
    """The values each local name of `function` is assigned, where every binding of the name is a
    plain `name = value`; None for a name also bound another way (a loop target, an unpacking, an
    augmented assignment, a `with ... as`), whose values this cannot list."""
    values: dict[str, list[ast.expr] | None] = {}
    plain: set[int] = set()
    nodes = own_nodes(function)
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    plain.add(id(target))
                    known = values.setdefault(target.id, [])
                    if known is not None:
                        known.append(node.value)
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in plain:
            values[node.id] = None
    return values


_NOT_ELEMENTWISE_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def compared_names(node: ast.AST, assigned: dict[str, list[ast.expr] | None], depth: int = 0) -> frozenset[str] | None:
    """The names whose values `node` compares, where `node` is built of elementwise comparisons
    only: a comparison (`labels == 0`), `&`/`|`/`^`/`~` of such, or a local name every assignment
    (`assigned`, from plain_assignments) of which is one (`valid = (num != 0) & (den != 0)`).
    None where it is anything else. Of tensors or arrays such a value is a boolean mask whatever
    the operands' kinds the inference knows; of Python values it is a bool."""
    if depth > 8:
        return None  # a name built from itself (`m = m & (x > 0)`): give up rather than loop
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        if any(isinstance(op, _NOT_ELEMENTWISE_COMPARISONS) for op in node.ops) or any(_is_text(o) for o in operands):
            return None
        return frozenset(o.id for o in operands if isinstance(o, ast.Name))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return compared_names(node.operand, assigned, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BOOL_PRESERVING_OPS):
        left = compared_names(node.left, assigned, depth + 1)
        right = compared_names(node.right, assigned, depth + 1)
        return left | right if left is not None and right is not None else None
    values = assigned.get(node.id) if isinstance(node, ast.Name) else None
    if not values:
        return None
    found: frozenset[str] = frozenset()
    for value in values:
        names = compared_names(value, assigned, depth + 1)
        if names is None:
            return None
        found |= names
    return found


def own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of `function` outside the functions, lambdas and classes nested in it (their
    names are bound here; their bodies are other scopes)."""
    found: list[ast.AST] = []
    pending = child_nodes(function)
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(child_nodes(node))
    return found


def _rebinding_values(function: ast.FunctionDef) -> dict[str, list[ast.expr | None]]:
    """Each name `function` binds, with the value of each plain `name = value` binding in its own
    body, the statement of each `name op= value`, and None for any other binding (a tuple target, `for`, `with`, `del`, an import,
    `except ... as`, a nested `def` or `class`, a `match` capture, a nested function's `nonlocal`)."""
    values: dict[str, list[ast.expr | None]] = {}
    plain: set[int] = set()
    nodes = own_nodes(function)
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
            plain.add(id(node.targets[0]))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            values.setdefault(node.target.id, []).append(node)  # type: ignore[arg-type]
            plain.add(id(node.target))
    other: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in plain:
            other.append(node.id)
        elif isinstance(node, ast.alias):
            other.append((node.asname or node.name).partition(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            other.extend([node.name] if node.name is not None else [])
        elif isinstance(node, ast.MatchMapping):
            other.extend([node.rest] if node.rest is not None else [])
    for node in walk(function):  # `global t` here, or `nonlocal t` in a nested function
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            other.extend(node.names)
    for name in other:
        values.setdefault(name, []).append(None)
    return values


def _keeps_kind(value: ast.expr | ast.AugAssign | None, name: str) -> bool:
    """`t = -t`, `t = t.contiguous()`, or `t += ...`: on a tensor (the only kind handed back to a
    caller, `_returned_elements`) an augmented assignment works in place and keeps it a tensor
    (torchmetrics' `var_x += ...` in `_pearson_corrcoef_update`)."""
    if isinstance(value, ast.AugAssign):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        return isinstance(value.operand, ast.Name) and value.operand.id == name
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args and not value.keywords:
        return value.func.attr in _KIND_KEEPING_METHODS and isinstance(value.func.value, ast.Name) and value.func.value.id == name
    return False


def _set_outside_init(cls: ClassInfo) -> frozenset[str] | None:
    """The attributes a method of `cls` other than `__init__` assigns or deletes on some object
    (`self.pe = Table()`), or None where one calls `setattr` (any of them, then)."""
    names: set[str] = set()
    for method in cls.methods.values():
        if method.name == "__init__":
            continue
        for node in walk(method):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                return None
    return frozenset(names)
