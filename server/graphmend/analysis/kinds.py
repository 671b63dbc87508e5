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
    # `total = 0.0; for p in params: total = total + p.norm() ** 2`: a tensor wherever the loop ran
    # (dynamo unrolls it, and branching on `total` then breaks), a Python number where it did not.
    TENSOR_OR_NUMBER = "tensor, or a Python number where a loop did not run"
    BOOL = "bool tensor"
    BOOL_SCALAR = "0-d bool tensor"
    TENSORS = "sequence of tensors"
    MODULE = "nn.Module"
    MODULES = "container of nn.Modules"
    LOGGER = "logging.Logger"
    JIT = "TorchScript module"
    LOCK = "lock"
    GENERATOR = "torch.Generator"
    PY_RNG = "random.Random"  # its randint/uniform/randrange draws are traced as the module's are
    SPARSE = "sparse tensor"  # not a TENSOR kind: dynamo wraps none of it, no tensor rule applies
    DISABLED = "function under torch.compiler.disable"
    # `mm = K.matmul`: a C method of a tensor, not yet called. Dynamo calls it while it knows the
    # tensor it came from; handed it as a frame input (a resume function's, after a break) it sees
    # a builtin it does not trace.
    TENSOR_METHOD = "bound C method of a tensor"

    # Kinds are tested for membership in sets on every expression: identity hashing (a C slot)
    # instead of Enum's Python-level hash of the member name.
    __hash__ = object.__hash__


TENSOR_KINDS = frozenset({Kind.TENSOR, Kind.SCALAR, Kind.BOOL, Kind.BOOL_SCALAR, Kind.RANDOM_NUMBER, Kind.TENSOR_OR_NUMBER})
BOOL_KINDS = frozenset({Kind.BOOL, Kind.BOOL_SCALAR})
SCALAR_KINDS = frozenset({Kind.SCALAR, Kind.BOOL_SCALAR, Kind.RANDOM_NUMBER})
NON_TENSOR_KINDS = frozenset({Kind.NONE, Kind.PY, Kind.PY_SEQ})
# What the rules treat as tensors (dynamo traces them as values it does not know) but the code,
# run eagerly, may hold as Python numbers: rewrites must not take them for tensors.
MAYBE_PYTHON_KINDS = frozenset({Kind.RANDOM_NUMBER, Kind.TENSOR_OR_NUMBER})


def is_tensor(kind: Kind) -> bool:
    return kind in TENSOR_KINDS


def tensor_kind(*, boolean: bool, scalar: bool) -> Kind:
    if boolean:
        return Kind.BOOL_SCALAR if scalar else Kind.BOOL
    return Kind.SCALAR if scalar else Kind.TENSOR


def maybe_python(kinds: list[Kind]) -> Kind | None:
    """The kind of an operation on these operands where one of them may be a Python number when
    run eagerly and the others are Python values or such numbers (`random.uniform(0, 1) < p`,
    `total ** 0.5`): still that; None where a tensor operand makes the result a tensor, or there
    is no such operand."""
    if not any(k in MAYBE_PYTHON_KINDS for k in kinds) or not all(k in MAYBE_PYTHON_KINDS or k is Kind.PY for k in kinds):
        return None
    return Kind.TENSOR_OR_NUMBER if Kind.TENSOR_OR_NUMBER in kinds else Kind.RANDOM_NUMBER


def join(a: Kind, b: Kind) -> Kind:
    """The kind of a variable that holds `a` on one path and `b` on another."""
    if a is b:
        return a
    if a in MAYBE_PYTHON_KINDS or b in MAYBE_PYTHON_KINDS:
        if {a, b} <= {Kind.RANDOM_NUMBER, Kind.PY}:
            return Kind.RANDOM_NUMBER
        return Kind.TENSOR_OR_NUMBER if {a, b} <= TENSOR_KINDS | {Kind.PY} else Kind.UNKNOWN
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
