"""The abstract values of the light tensor inference: what an expression is known to be.

The inference never guesses: UNKNOWN is the default, and no rule fires on UNKNOWN alone. Tensor
kinds also carry the two facts rules need: whether the tensor is boolean (indexing with it is a
dynamic-shape mask) and whether it is 0-d (a full reduction such as `x.sum()`; using it as an index
or a size needs its value, which dynamo does not have).
"""

from __future__ import annotations

import enum


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    NONE = "None"
    PY = "python value"  # number, str, bool, torch.Size, dtype, device...: never a tensor
    PY_SEQ = "python sequence"  # a list/tuple of non-tensors
    TENSOR = "tensor"
    SCALAR = "0-d tensor"
    # `random.randint(...)`, `random.uniform(...)`: dynamo traces the draw into the graph, so the
    # number is a 0-d value there (branching on it, `int(r)`, a slice bound break as for a 0-d
    # tensor), but it is a Python number when the code runs eagerly, and dynamo cannot do Python
    # arithmetic of it with a Python number (GB0213: the whole function falls back to eager).
    RANDOM_NUMBER = "number drawn with random"
    BOOL = "bool tensor"
    BOOL_SCALAR = "0-d bool tensor"
    TENSORS = "sequence of tensors"
    MODULE = "nn.Module"
    MODULES = "container of nn.Modules"
    LOGGER = "logging.Logger"
    JIT = "TorchScript module"
    LOCK = "lock"
    GENERATOR = "torch.Generator"
    SPARSE = "sparse tensor"  # not a TENSOR kind: dynamo wraps none of it, no tensor rule applies
    DISABLED = "function under torch.compiler.disable"

    # Kinds are tested for membership in sets on every expression: identity hashing (a C slot)
    # instead of Enum's Python-level hash of the member name.
    __hash__ = object.__hash__


TENSOR_KINDS = frozenset({Kind.TENSOR, Kind.SCALAR, Kind.BOOL, Kind.BOOL_SCALAR, Kind.RANDOM_NUMBER})
BOOL_KINDS = frozenset({Kind.BOOL, Kind.BOOL_SCALAR})
SCALAR_KINDS = frozenset({Kind.SCALAR, Kind.BOOL_SCALAR, Kind.RANDOM_NUMBER})
NON_TENSOR_KINDS = frozenset({Kind.NONE, Kind.PY, Kind.PY_SEQ})


def is_tensor(kind: Kind) -> bool:
    return kind in TENSOR_KINDS


def tensor_kind(*, boolean: bool, scalar: bool) -> Kind:
    if boolean:
        return Kind.BOOL_SCALAR if scalar else Kind.BOOL
    return Kind.SCALAR if scalar else Kind.TENSOR


def join(a: Kind, b: Kind) -> Kind:
    """The kind of a variable that holds `a` on one path and `b` on another."""
    if a is b:
        return a
    if a in TENSOR_KINDS and b in TENSOR_KINDS:
        return tensor_kind(boolean=a in BOOL_KINDS and b in BOOL_KINDS, scalar=a in SCALAR_KINDS and b in SCALAR_KINDS)
    # An optional tensor (None on one path) is still worth checking as a tensor: on the path where
    # it is a tensor, the break happens.
    if a is Kind.NONE and b in TENSOR_KINDS:
        return b
    if b is Kind.NONE and a in TENSOR_KINDS:
        return a
    if {a, b} <= NON_TENSOR_KINDS:
        return Kind.PY
    return Kind.UNKNOWN
