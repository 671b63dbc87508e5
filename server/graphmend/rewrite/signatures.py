"""Symbolic dtype and shape of a tensor expression, to prove two branches produce the same type.

`torch.where(c, a, b)` promotes `a` and `b` to a common dtype and broadcasts their shapes: when
the branches differ (an int64 branch and a float32 one, a (3,) and a (1,) one), the rewrite
silently changes the result (taxonomy §2.1, demos d3 and d4). So the fixer requires the two
signatures below to be *identical*, computed without knowing any concrete dtype or shape:

- names stand for themselves: `x` has dtype `dtype(x)` and shape `shape(x)`;
- elementwise operations keep their operand's shape; a Python int keeps the dtype except of a
  bool tensor (`int_arith(dtype(x))`), a Python float keeps it only for floating tensors
  (`float_of(dtype(x))`); two tensors promote and broadcast (`promote{...}`, `broadcast{...}`);
- `x.float()`, `.to(torch.float16)`, comparisons give known dtypes; facts about names (a name
  assigned from `torch.softmax(...)` is floating) simplify `float_of(...)`.

So `y + 1` and `y - 1` have the same signature whatever `y` is; `y / 2` and `y` only when `y` is
known to be floating. Anything not understood is UNKNOWN, and UNKNOWN never equals anything.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.kinds import Kind, is_tensor
from ..astwalk import child_nodes, walk
from .context import FixContext
from .flow import enclosing_blocks, reaching_definition, reaching_unpacking
from .py_types import name_type, self_attribute_type

UNKNOWN = ("unknown",)
SCALAR_SHAPE = ("scalar",)
SINGLE_SHAPE = ("single",)  # one element, with dimensions of size 1 (`torch.rand(1)`)
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
DTYPE_NAMES = {  # torch.<name> -> the dtype it names
    "float": "float32", "float32": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "float64": "float64", "double": "float64", "long": "int64", "int64": "int64", "int": "int32", "int32": "int32",
    "bool": "bool", "int8": "int8", "uint8": "uint8", "int16": "int16", "short": "int16",
}
# Elementwise functions that keep the dtype of their (first) tensor argument.
SAME_DTYPE = frozenset(
    {
        "neg", "negative", "abs", "relu", "relu6", "clamp", "clip", "clamp_min", "clamp_max", "round", "floor",
        "ceil", "trunc", "sign", "square", "contiguous", "clone", "detach", "flip", "roll", "tril", "triu",
        "masked_fill", "maximum", "minimum", "fmax", "fmin", "leaky_relu", "hardtanh", "cumsum", "cumprod",
        "nan_to_num", "where",
    }
)
# Elementwise functions that produce a floating result (float_of the argument's dtype).
FLOAT_RESULT = frozenset(
    {
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos", "tan",
        "asin", "acos", "atan", "sinh", "cosh", "erf", "erfinv", "reciprocal", "gelu", "silu", "mish", "softplus",
        "softmax", "log_softmax", "normalize", "elu", "selu", "celu", "hardswish", "hardsigmoid", "logsigmoid",
        "exp2", "sinc", "atanh", "asinh", "acosh", "softsign", "tanhshrink",
    }
)
_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "tensor", "arange", "as_tensor", "scalar_tensor"})
# Elementwise tests: a bool tensor of the argument's shape.
BOOL_RESULT = frozenset({"isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "logical_not", "isreal"})
# torch.nn.functional losses: one value (0-d) with the default reduction ("mean") or "sum".
LOSSES = frozenset(
    {
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "multilabel_soft_margin_loss",
        "poisson_nll_loss", "hinge_embedding_loss", "margin_ranking_loss", "cosine_embedding_loss",
        "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    }
)


_RANDOM_FACTORIES = frozenset({"rand", "randn"})


def _python_attribute(ctx: FixContext, owner: object, attr: str) -> bool:
    """`self.<attr>` is only ever set in `__init__` to values of a known Python type
    (`self.p = p` with `p: float`, `self.eps = 1e-5`)."""
    init = getattr(owner, "methods", {}).get("__init__")
    return init is not None and self_attribute_type(ctx, init, attr) is not None


def _all_ones(sizes: list[ast.expr]) -> bool:
    """`1`, `1, 1` or `(1,)`: sizes of a tensor with one element."""
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        sizes = sizes[0].elts
    return bool(sizes) and all(isinstance(s, ast.Constant) and s.value == 1 and type(s.value) is int for s in sizes)


def _is_empty_tuple(node: ast.AST) -> bool:
    return isinstance(node, (ast.Tuple, ast.List)) and not node.elts


_REDUCTIONS = frozenset(
    {
        "sum", "prod", "nansum", "mean", "nanmean", "std", "var", "norm", "logsumexp", "max", "min", "amax",
        "amin", "median", "argmax", "argmin", "count_nonzero", "any", "all",
    }
)
# torch.nn layers whose output is floating point (the dtype of their weights).
FLOAT_MODULES = frozenset(
    {
        "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "Embedding", "LayerNorm", "GroupNorm", "RMSNorm",
    }
)
# Layers that return their input's dtype (outside autocast, like the functions above).
_SAME_DTYPE_LAYERS = frozenset({"Identity", "Dropout", "ReLU", "ReLU6", "LeakyReLU", "Tanh", "Sigmoid", "GELU", "SiLU"})
# Shape-preserving functions among the above (softmax along a dim keeps the shape; so do all
# elementwise ones). `where`/`maximum` broadcast their operands.
_BROADCASTING = frozenset({"maximum", "minimum", "fmax", "fmin", "where"})
_CLAMPS = frozenset({"clamp", "clip", "clamp_min", "clamp_max"})


# The dtype `torch.tensor(0.5)` gets: torch's default floating dtype (float32 unless the process
# changed it), the same for every such literal, whichever it is.
DEFAULT_FLOAT = ("default", "float")


def _literal_dtype(leaf: str, node: ast.Call, qualname: Callable[[ast.AST], str | None]) -> tuple:
    """`torch.tensor(1.0)`, `torch.tensor(float("nan"))`, `torch.tensor(3)`: the dtype a Python
    number literal gives (bool, int64, or the default floating dtype; `scalar_tensor` is always
    floating); UNKNOWN for anything else."""
    if leaf not in ("tensor", "as_tensor", "scalar_tensor") or not node.args:
        return UNKNOWN
    value = node.args[0]
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    if isinstance(value, ast.Call) and qualname(value.func) == "builtins.float" and len(value.args) == 1:
        kind: type = float  # float("nan"), float("inf")
    elif isinstance(value, ast.Constant) and type(value.value) in (bool, int, float):
        kind = type(value.value)
    else:
        return UNKNOWN
    if leaf == "scalar_tensor" or kind is float:
        return DEFAULT_FLOAT
    return ("const", "bool") if kind is bool else ("const", "int64")


# Functions (and methods) whose result is indices: int64, or int32 with `out_int32=True`.
INDEX_RESULTS = frozenset({"multinomial", "randperm", "nonzero", "argsort", "searchsorted", "bucketize"})


def _index_dtype(node: ast.Call) -> tuple:
    narrow = next((k.value for k in node.keywords if k.arg == "out_int32"), None)
    if narrow is None or (isinstance(narrow, ast.Constant) and narrow.value is False):
        return ("const", "int64")
    return ("const", "int32") if isinstance(narrow, ast.Constant) and narrow.value is True else UNKNOWN


@dataclass(frozen=True)
class Sig:
    dtype: tuple
    shape: tuple


def _promote(*dtypes: tuple) -> tuple:
    flat: set[tuple] = set()
    for dtype in dtypes:
        if dtype == UNKNOWN:
            return UNKNOWN
        flat |= set(dtype[1]) if dtype[0] == "promote" else {dtype}
    # float_of(d) absorbs d: if d is floating they are the same dtype, and if d is an integer or
    # bool dtype the floating one wins the promotion
    flat -= {d[1] for d in flat if d[0] == "float_of"}
    if len(flat) == 1:
        return next(iter(flat))
    return ("promote", frozenset(flat))


def _broadcast(*shapes: tuple) -> tuple:
    flat: set[tuple] = set()
    for shape in shapes:
        if shape == UNKNOWN:
            return UNKNOWN
        if shape == SCALAR_SHAPE:
            continue  # a 0-d operand broadcasts to anything without changing it
        flat |= set(shape[1]) if shape[0] == "broadcast" else {shape}
    if not flat:
        return SCALAR_SHAPE
    if len(flat) == 1:
        return next(iter(flat))
    return ("broadcast", frozenset(flat))


def _float_of(dtype: tuple) -> tuple:
    if dtype == UNKNOWN or dtype[0] == "float_of":
        return dtype
    if dtype[0] == "const":
        return dtype if dtype[1] in FLOATS else ("const", "float32")
    return ("float_of", dtype)


def _int_arith(dtype: tuple) -> tuple:
    if dtype == UNKNOWN or dtype[0] in ("float_of", "int_arith"):
        return dtype
    if dtype[0] == "const":
        return ("const", "int64") if dtype[1] == "bool" else dtype
    return ("int_arith", dtype)


class Signatures:
    """Computes Sig for expressions of one function.

    A name is followed to its reaching definition (`y = x * 2` makes `y + 1` the signature of
    `x * 2 + 1`), so facts propagate; a name without one (a parameter, a loop variable) stands for
    itself, and is floating when `floating` says so (a `torch.FloatTensor` annotation)."""

    def __init__(self, ctx: FixContext, floating: set[str] | None = None, at: ast.stmt | None = None) -> None:
        self.ctx = ctx
        self.floating = floating or set()  # names known to hold floating-point tensors
        self.at = at  # where synthetic nodes (no position) are evaluated
        self._expanding: set[int] = set()

    def of(self, node: ast.AST) -> Sig:
        method = getattr(self, f"_{type(node).__name__}", None)
        return method(node) if method is not None else Sig(UNKNOWN, UNKNOWN)

    def is_floating(self, dtype: tuple) -> bool:
        """Known to be a floating-point dtype (whatever its width)."""
        if dtype[0] in ("float_of", "float_module"):
            return True
        if dtype[0] == "const":
            return dtype[1] in FLOATS
        if dtype == DEFAULT_FLOAT:
            return True
        if dtype[0] == "of":
            return dtype[1] in self.floating
        if dtype[0] == "promote":
            return any(self.is_floating(d) for d in dtype[1])  # float wins a promotion with ints
        if dtype[0] in ("int_arith", "sum_of"):
            return self.is_floating(dtype[1])
        return False

    def equal_shapes(self, a: Sig, b: Sig) -> bool:
        return UNKNOWN not in (a.shape, b.shape) and a.shape == b.shape

    def equal(self, a: Sig, b: Sig) -> bool:
        return UNKNOWN not in (a.dtype, a.shape, b.dtype, b.shape) and self._norm(a.dtype) == self._norm(b.dtype) and a.shape == b.shape

    def known_different(self, a: Sig, b: Sig) -> bool:
        """Two dtypes known to differ (int64 vs float32): no check at run time could make them agree."""
        first, second = self._norm(a.dtype), self._norm(b.dtype)
        if first[0] == "const" and second[0] == "const":
            return first != second
        integral = [d for d in (first, second) if d[0] == "const" and d[1] not in FLOATS]
        return bool(integral) and any(self.is_floating(d) for d in (first, second))  # an integer vs a float

    def _norm(self, dtype: tuple) -> tuple:
        """Simplify with what is known: float_of(d) and int_arith(d) are d when d is floating."""
        if dtype[0] in ("float_of", "int_arith"):
            inner = self._norm(dtype[1])
            if self.is_floating(inner):
                return inner
            if dtype[0] == "int_arith" and inner[0] == "const" and inner[1] != "bool":
                return inner
            return (dtype[0], inner)
        if dtype[0] == "promote":
            parts = frozenset(self._norm(d) for d in dtype[1])
            floats = {d for d in parts if d[0] == "const" and d[1] in FLOATS}
            if len(floats) == 1 and all(d[0] == "const" for d in parts):
                return next(iter(floats))  # a floating dtype wins over integers and bool, at its own width
            return next(iter(parts)) if len(parts) == 1 else ("promote", parts)
        if dtype[0] == "sum_of":
            inner = self._norm(dtype[1])
            if self.is_floating(inner):
                return inner
            if inner[0] == "const":
                return ("const", "int64")
            return ("sum_of", inner)
        return dtype

    # -- leaves -------------------------------------------------------------------------------
    def _Name(self, node: ast.Name) -> Sig:
        statement = self.ctx.statement_of(node) if hasattr(node, "lineno") else self.at
        if statement is not None and len(self._expanding) < 12:
            value = reaching_definition(self.ctx, statement, node.id)
            if value is not None and id(value) not in self._expanding:
                self._expanding.add(id(value))
                try:
                    found = self.of(value)
                finally:
                    self._expanding.discard(id(value))
                # What the definition does not tell (a module output's shape) the name still
                # identifies: the same name read at the same point is the same tensor.
                return Sig(
                    found.dtype if found.dtype != UNKNOWN else ("of", node.id),
                    found.shape if found.shape != UNKNOWN else ("of", node.id),
                )
            unpacked = reaching_unpacking(self.ctx, statement, node.id)
            if isinstance(unpacked, ast.Call) and isinstance(unpacked.func, ast.Attribute) and unpacked.func.attr == "tolist" and not unpacked.args:
                # `a, b = t.tolist()`: a number of `t`'s dtype (a 0-d tensor of it once fixed)
                return Sig(self.of(unpacked.func.value).dtype, SCALAR_SHAPE)
        function = self.ctx.function_of(statement) if statement is not None else None
        if function is not None:
            known = name_type(self.ctx, function, node.id)  # `scale: float`, `n = x.shape[0]`
            if known is not None and not known.optional and known.name in ("int", "float", "bool"):
                return Sig(("py", known.name), SCALAR_SHAPE)
        return Sig(("of", node.id), ("of", node.id))

    def _Attribute(self, node: ast.Attribute) -> Sig:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and hasattr(node, "lineno"):
            function = self.ctx.function_of(node)
            owner = self.ctx.index.owner.get(id(function)) if function is not None else None
            if owner is not None and (self.ctx.index.attr_kind(owner, node.attr) is Kind.PY or _python_attribute(self.ctx, owner, node.attr)):
                return Sig(UNKNOWN, SCALAR_SHAPE)  # `self.p = p` in __init__: a Python number (or str)
        text = self.ctx.code(node)
        return Sig(("of", text), ("of", text))  # self.weight, module.bias: opaque but stable

    def _Constant(self, node: ast.Constant) -> Sig:
        if isinstance(node.value, bool):
            return Sig(("py", "bool"), SCALAR_SHAPE)
        if isinstance(node.value, int):
            return Sig(("py", "int"), SCALAR_SHAPE)
        if isinstance(node.value, float):
            return Sig(("py", "float"), SCALAR_SHAPE)
        return Sig(UNKNOWN, UNKNOWN)

    # -- operators ----------------------------------------------------------------------------
    def _UnaryOp(self, node: ast.UnaryOp) -> Sig:
        operand = self.of(node.operand)
        if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            return operand
        return Sig(UNKNOWN, UNKNOWN)

    def _BinOp(self, node: ast.BinOp) -> Sig:
        left, right = self.of(node.left), self.of(node.right)
        if isinstance(node.op, ast.MatMult):
            return Sig(_promote(left.dtype, right.dtype), UNKNOWN)
        dtype = self._arith(left.dtype, right.dtype, true_division=isinstance(node.op, ast.Div))
        return Sig(dtype, _broadcast(left.shape, right.shape))

    def _arith(self, left: tuple, right: tuple, true_division: bool = False) -> tuple:
        if UNKNOWN in (left, right):
            return UNKNOWN
        if left[0] == "py" and right[0] == "py":
            return UNKNOWN  # Python arithmetic: not a tensor at all
        if left[0] == "py" or right[0] == "py":
            scalar, tensor = (left, right) if left[0] == "py" else (right, left)
            result = _float_of(tensor) if scalar[1] == "float" else _int_arith(tensor)
        else:
            result = _promote(left, right)
        return _float_of(result) if true_division else result

    def _Compare(self, node: ast.Compare) -> Sig:
        if not all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)) for op in node.ops):
            return Sig(UNKNOWN, UNKNOWN)
        shapes = [self.of(node.left).shape] + [self.of(c).shape for c in node.comparators]
        return Sig(("const", "bool"), _broadcast(*shapes))

    # -- calls --------------------------------------------------------------------------------
    def _Call(self, node: ast.Call) -> Sig:
        func = node.func
        name = self.ctx.qualname(func)
        if name is not None and name.startswith("torch."):
            return self._function(name.rsplit(".", 1)[1], node)
        if isinstance(func, ast.Attribute) and name is None:
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                layer = self._self_module(node, func.attr)
                shape = self._layer_shape(node, func.attr)
                if layer in FLOAT_MODULES:  # the output has the (floating) dtype of the weights
                    return Sig(("float_module", func.attr), shape)
                if layer in _SAME_DTYPE_LAYERS and node.args:
                    return Sig(self.of(node.args[0]).dtype, shape)
            receiver = self.of(func.value)
            return self._method(func.attr, receiver, node)
        return Sig(UNKNOWN, UNKNOWN)

    def _self_module(self, node: ast.AST, attr: str) -> str | None:
        function = self.ctx.function_of(node)
        owner = self.ctx.index.owner.get(id(function)) if function is not None else None
        return owner.attr_torch_classes.get(attr) if owner is not None else None

    def _layer_shape(self, node: ast.Call, attr: str) -> tuple:
        """`self.norm(x)`, `self.square_linear(x)`: the shape of `x`; otherwise unknown."""
        function = self.ctx.function_of(node)
        owner = self.ctx.index.owner.get(id(function)) if function is not None else None
        if owner is None or attr not in owner.attr_shape_preserving or len(node.args) != 1 or node.keywords:
            return UNKNOWN
        return self.of(node.args[0]).shape

    def dtype_argument(self, node: ast.AST) -> tuple:
        if isinstance(node, ast.Attribute) and node.attr == "dtype":  # .to(hidden.dtype)
            return self.of(node.value).dtype
        name = self.ctx.qualname(node)
        if name is not None and name.startswith("torch.") and name[6:] in DTYPE_NAMES:
            return ("const", DTYPE_NAMES[name[6:]])
        return UNKNOWN

    def _method(self, method: str, receiver: Sig, node: ast.Call) -> Sig:
        if method in INDEX_RESULTS:
            return Sig(_index_dtype(node), UNKNOWN)
        if method in ("float", "double", "half", "bfloat16", "long", "int", "bool", "short") and not node.args:
            return Sig(("const", DTYPE_NAMES[method]), receiver.shape)
        if method == "to" and len(node.args) == 1 and not node.keywords:
            return Sig(self.dtype_argument(node.args[0]), receiver.shape)  # a dtype or device: never a new shape
        if method in ("reshape", "view") and len(node.args) == 1 and not node.keywords and _is_empty_tuple(node.args[0]):
            return Sig(receiver.dtype, SCALAR_SHAPE)  # `t.reshape(())`: 0-d, or it raised
        if method == "type_as" and len(node.args) == 1:
            return Sig(self.of(node.args[0]).dtype, receiver.shape)
        return self._elementwise(method, receiver, node, offset=0)

    def _function(self, leaf: str, node: ast.Call) -> Sig:
        if leaf in INDEX_RESULTS:
            return Sig(_index_dtype(node), UNKNOWN)
        if leaf == "randint":  # int64 unless told otherwise
            dtype_kw = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            return Sig(self.dtype_argument(dtype_kw) if dtype_kw is not None else ("const", "int64"), UNKNOWN)
        if leaf in _FACTORIES or leaf in _RANDOM_FACTORIES:
            dtype_kw = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            dtype = self.dtype_argument(dtype_kw) if dtype_kw is not None else _literal_dtype(leaf, node, self.ctx.qualname)
            shape = UNKNOWN
            sized_empty = leaf in ("zeros", "ones", "empty", "full") and node.args and _is_empty_tuple(node.args[0])
            of_a_number = leaf in ("tensor", "as_tensor", "scalar_tensor") and node.args and self._python_number(node.args[0])
            if sized_empty or of_a_number:
                shape = SCALAR_SHAPE
            elif leaf in ("zeros", "ones", "empty", "rand", "randn") and _all_ones(node.args):
                shape = SINGLE_SHAPE
            return Sig(dtype, shape)
        if not node.args:
            return Sig(UNKNOWN, UNKNOWN)
        first = self.of(node.args[0])
        if leaf in ("zeros_like", "ones_like", "empty_like") and len(node.args) == 1:
            dtype_kw = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            dtype = self.dtype_argument(dtype_kw) if dtype_kw is not None else first.dtype
            return Sig(dtype, first.shape)
        if leaf in LOSSES:
            reduction = next((k.value for k in node.keywords if k.arg == "reduction"), None)
            scalar = reduction is None or (isinstance(reduction, ast.Constant) and reduction.value in ("mean", "sum"))
            return Sig(_float_of(first.dtype), SCALAR_SHAPE if scalar else UNKNOWN)
        if leaf == "where" and len(node.args) == 3:
            a, b = self.of(node.args[1]), self.of(node.args[2])
            return Sig(self._arith(a.dtype, b.dtype) if "py" in (a.dtype[0], b.dtype[0]) else _promote(a.dtype, b.dtype),
                       _broadcast(first.shape, a.shape, b.shape))
        return self._elementwise(leaf, first, node, offset=1)

    def _python_number(self, node: ast.expr) -> bool:
        """A Python int, float or bool: a literal, a name known to hold one, or a conversion."""
        if isinstance(node, ast.Call) and self.ctx.qualname(node.func) in ("builtins.float", "builtins.int", "builtins.bool"):
            return True
        return self.of(node).dtype[0] == "py"

    def _IfExp(self, node: ast.IfExp) -> Sig:
        """`a if c else b`: what both values share."""
        a, b = self.of(node.body), self.of(node.orelse)
        return Sig(a.dtype if a.dtype == b.dtype else UNKNOWN, a.shape if a.shape == b.shape else UNKNOWN)

    def _reduction(self, name: str, first: Sig, node: ast.Call, offset: int) -> Sig | None:
        """Full reductions (no dim): a 0-d result. sum/prod widen integers to int64."""
        if name not in _REDUCTIONS:
            return None
        has_dim = len(node.args) > offset or any(k.arg in ("dim", "axis", "keepdim") for k in node.keywords)
        shape = UNKNOWN if has_dim else SCALAR_SHAPE
        if name in ("mean", "std", "var", "norm", "logsumexp", "nanmean"):
            return Sig(_float_of(first.dtype), shape)
        if name in ("sum", "prod", "nansum"):
            return Sig(("sum_of", first.dtype) if first.dtype != UNKNOWN else UNKNOWN, shape)
        if name in ("argmax", "argmin", "count_nonzero"):
            return Sig(("const", "int64"), shape)
        if name in ("any", "all"):
            return Sig(("const", "bool"), shape)
        return Sig(first.dtype, shape)  # max, min, amax, amin, median

    def _clamped(self, first: Sig, positional: list[ast.expr], keywords: list[ast.expr]) -> Sig:
        """`clamp`/`clip`: a Python float bound turns an integer tensor into a float one
        (`x.clamp(min=-1.0)` on int64 gives float32, found by tests/test_fix_properties.py), a
        Python int bound keeps the dtype, and a tensor bound promotes and broadcasts. A positional
        bound of unknown type counts as a tensor; a keyword one as a Python number unless the
        analysis knows it is a tensor (transformers' fp16 overflow clamp passes
        `min=-clamp_value` from `torch.finfo`)."""
        dtype = first.dtype
        for bound_node, by_keyword in [*((b, False) for b in positional), *((b, True) for b in keywords)]:
            bound = self.of(bound_node)
            if bound.dtype[0] == "py":
                dtype = _float_of(dtype) if bound.dtype[1] == "float" else dtype
            elif not by_keyword or is_tensor(self.ctx.kind(bound_node)):
                return Sig(UNKNOWN, UNKNOWN)
        return Sig(dtype, first.shape)

    def _elementwise(self, name: str, first: Sig, node: ast.Call, offset: int) -> Sig:
        reduced = self._reduction(name, first, node, offset)
        if reduced is not None:
            return reduced
        extra = [self.of(a) for a in node.args[offset:]]
        if name in ("softmax", "log_softmax", "normalize", "cumsum", "cumprod"):
            extra = []  # the other positional arguments are dims
        if name in ("add", "sub", "mul", "subtract", "multiply", "pow") and extra:  # `x.pow(2)` is `x ** 2`
            return Sig(self._arith(first.dtype, extra[0].dtype), _broadcast(first.shape, extra[0].shape))
        if name in ("div", "divide", "true_divide") and extra and not any(k.arg == "rounding_mode" for k in node.keywords):
            return Sig(_float_of(self._arith(first.dtype, extra[0].dtype)), _broadcast(first.shape, extra[0].shape))
        if name in SAME_DTYPE:
            shapes = [first.shape] + ([e.shape for e in extra] if name in _BROADCASTING else [])
            dtypes = [first.dtype] + ([e.dtype for e in extra if e.dtype[0] != "py"] if name in _BROADCASTING else [])
            if name in _CLAMPS:
                return self._clamped(first, node.args[offset:], [k.value for k in node.keywords if k.arg in ("min", "max")])
            return Sig(_promote(*dtypes), _broadcast(*shapes))
        if name in FLOAT_RESULT:
            return Sig(_float_of(first.dtype), first.shape)
        if name in BOOL_RESULT:
            return Sig(("const", "bool"), first.shape)
        return Sig(UNKNOWN, UNKNOWN)


# Calls that raise on an integer or bool tensor: a name they were applied to, and not rebound
# since, holds floating-point values wherever the program goes on (else it would have raised).
FLOATING_ONLY_METHODS = frozenset({"mean", "nanmean", "std", "var", "norm", "softmax", "log_softmax", "logsumexp"})
FLOATING_ONLY_FUNCTIONS = FLOATING_ONLY_METHODS | {"layer_norm", "group_norm", "rms_norm"}
_FLOAT_WEIGHT_LAYERS = FLOAT_MODULES - {"Embedding"}


def floating_names(ctx: FixContext, function: ast.FunctionDef | ast.AsyncFunctionDef, before: ast.stmt | None = None) -> set[str]:
    """Names known to hold floating-point tensors at `before`: parameters annotated so
    (`hidden_states: torch.FloatTensor`), and, with `before`, names an earlier statement on every
    path to it passed to an operation that only accepts floating tensors (`norm = x.norm()`: had `x`
    been an integer tensor, that line would have raised). Everything else is learnt by following
    definitions."""
    floating: set[str] = set()
    for arg in function.args.posonlyargs + function.args.args + function.args.kwonlyargs:
        name = ctx.qualname(arg.annotation) if arg.annotation is not None else None
        if name in ("torch.FloatTensor", "torch.HalfTensor", "torch.DoubleTensor", "torch.BFloat16Tensor"):
            floating.add(arg.arg)
    if before is not None:
        owner = ctx.index.owner.get(id(function))
        for statement in _dominating(ctx, function, before):
            for name in _floating_evidence(ctx, statement, owner):
                if not _rebound_between(function, name, statement, before):
                    floating.add(name)
    return floating


def _dominating(ctx: FixContext, function: ast.AST, before: ast.stmt) -> list[ast.stmt]:
    """Statements that run on every path to `before`: its earlier siblings, and those of each
    enclosing statement up to the function."""
    return [s for _, block, index in enclosing_blocks(ctx, function, before) for s in block[:index]]


def _floating_evidence(ctx: FixContext, statement: ast.stmt, owner: object) -> set[str]:
    if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
        return set()
    names: set[str] = set()
    for node in _unconditional_nodes(statement):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        qualified = ctx.qualname(func)
        if qualified is not None and qualified.startswith("torch.") and qualified.rsplit(".", 1)[1] in FLOATING_ONLY_FUNCTIONS:
            target = node.args[0] if node.args else None
        elif isinstance(func, ast.Attribute) and func.attr in FLOATING_ONLY_METHODS and qualified is None:
            target = func.value
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and getattr(owner, "attr_torch_classes", {}).get(func.attr) in _FLOAT_WEIGHT_LAYERS
            and len(node.args) == 1
        ):
            target = node.args[0]  # a floating-weight layer (Linear, Conv, LayerNorm) rejects integer input
        else:
            continue
        if isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _unconditional_nodes(statement: ast.stmt):  # type: ignore[no-untyped-def]
    """The nodes of a statement that are evaluated whenever it runs (not the later operands of
    `and`/`or`, the branches of `a if c else b`, lambda or comprehension bodies)."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.BoolOp):
            stack.append(node.values[0])
        elif isinstance(node, ast.IfExp):
            stack.append(node.test)
        else:
            stack.extend(child_nodes(node))


def _rebound_between(function: ast.AST, name: str, first: ast.stmt, last: ast.stmt) -> bool:
    start, end = first.lineno, last.lineno
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and start <= n.lineno < end
        for n in walk(function)
    )
