"""Conditions whose value dynamo knows while it traces, so one branch is dead code under compile.

`if not is_torchdynamo_compiling(): logger.warning(...)` is the standard way to keep eager-only
code out of a graph: dynamo evaluates the guard to a constant and never looks at the dead branch.
Flagging breaks in such branches would be false positives, so the walker asks `static_truth`
before it descends. Each entry below was measured on torch 2.13 (see tests/corpus/guards_*.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

# Functions that return True while dynamo traces.
TRUE_WHILE_COMPILING = frozenset(
    {
        "torch.compiler.is_compiling",
        "torch.compiler.is_dynamo_compiling",
        "torch._dynamo.is_compiling",
        "torch._dynamo.external_utils.is_compiling",
        "torch._utils.is_compiling",
    }
)
# Any function of this name (transformers.utils.is_torchdynamo_compiling and its copies).
TRUE_WHILE_COMPILING_NAMES = frozenset({"is_torchdynamo_compiling", "is_dynamo_compiling"})
# Functions that return False while dynamo traces.
FALSE_WHILE_COMPILING = frozenset(
    {
        "torch.jit.is_scripting",
        "torch.jit.is_tracing",
        "torch._C._get_tracing_state",
        "torch.onnx.is_in_onnx_export",
        "torch.fx._symbolic_trace.is_fx_tracing",
        "torch._jit_internal.is_scripting",
        # `return torch._C._get_tracing_state()`, which dynamo inlines (measured above): the ONNX
        # branches of torchvision's detection models (`paste_masks_in_image`)
        "torchvision._is_tracing",
    }
)
FALSE_CONSTANT_NAMES = frozenset({"TYPE_CHECKING", "typing.TYPE_CHECKING"})
# GraphMend's own checks on shapes and dtypes (rewrite/compile_checks.py), written in front of a
# tensor test as `check(...) or <test>`: dynamo settles them while tracing, and the fix is made for
# the inputs where they hold, so the test after them is taken as not traced.
TRUE_WHEN_FIXED_NAMES = frozenset(
    {"_graphmend_product_keeps", "_graphmend_same_type", "_graphmend_one_value", "_graphmend_mask_selects_alike", "_graphmend_mask_selects_rows", "_graphmend_mask_spans",
     "_graphmend_lengths_fit", "_graphmend_mask_adds_rows", "_graphmend_holds_values",
     "_graphmend_stackable", "_graphmend_broadcast_free", "_graphmend_compares_in_tensor", "_graphmend_floating", "_graphmend_complement_keeps", "_graphmend_counts_fit", "_graphmend_broadcastable",
     "_graphmend_has_dtype"}
)

QualnameFn = Callable[[ast.AST], "str | None"]
# The Python constants a caller's argument may be for its value to be known (dynamo specialises
# on each, and `==` between them is Python's, with no user `__eq__` to run).
CONSTANT_TYPES = (bool, int, float, str, type(None))
_UNKNOWN = object()


@dataclass(frozen=True)
class Given:
    """What every call that reaches a function says of one parameter's argument: its truth, the
    constant itself where all pass the same one, or only that it is never None (`minlength=4 *
    len_t`). Dynamo traces a Python constant argument as that constant, so `if zero_division ==
    "warn"` with the default `0.0` never runs its body, and `if minlength is None` never does
    where every caller passes a number."""

    truth: bool | None = None
    value: object = _UNKNOWN
    not_none: bool = False

    @staticmethod
    def constant(value: object) -> Given:
        return Given(truth=bool(value), value=value, not_none=value is not None)

    def meet(self, other: Given) -> Given | None:
        """What both calls say (None where nothing is left)."""
        same = type(self.value) is type(other.value) and self.value == other.value
        met = Given(
            truth=self.truth if self.truth is other.truth else None,
            value=self.value if same else _UNKNOWN,
            not_none=self.not_none and other.not_none,
        )
        return None if met == Given() else met

    def compared(self, op: ast.cmpop, other: ast.Constant) -> bool | None:
        """The result of `parameter <op> other`, where this says it (`is None`, `== "warn"`)."""
        if isinstance(op, (ast.Is, ast.IsNot)) and other.value is None:
            known = self.value is None if self.value is not _UNKNOWN else (False if self.not_none else None)
            return None if known is None else known is isinstance(op, ast.Is)
        if isinstance(op, (ast.Eq, ast.NotEq)) and self.value is not _UNKNOWN and isinstance(other.value, CONSTANT_TYPES):
            return (self.value == other.value) is isinstance(op, ast.Eq)
        return None


_NONE_FIXED: Mapping[str, Given] = MappingProxyType({})


def static_truth(test: ast.expr, qualname: QualnameFn, fixed: Mapping[str, Given] = _NONE_FIXED) -> bool | None:
    """True/False when dynamo knows the value of `test` at trace time, else None. `fixed`: what is
    known of names where `test` is (a parameter every caller passes a constant)."""
    if isinstance(test, ast.Name) and test.id in fixed:
        return fixed[test.id].truth
    if isinstance(test, ast.Compare) and fixed:
        return _fixed_comparison(test, fixed)
    if isinstance(test, ast.Constant):
        if isinstance(test.value, (bool, int, float, str, bytes)) or test.value is None:
            return bool(test.value)
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = static_truth(test.operand, qualname, fixed)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        is_and = isinstance(test.op, ast.And)
        unknown = False
        for value in test.values:
            truth = static_truth(value, qualname, fixed)
            if truth is None:
                unknown = True
            elif truth is not is_and:  # False in an `and`, True in an `or`, decides it
                return truth
        return None if unknown else is_and
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in TRUE_WHEN_FIXED_NAMES:
        return True
    if isinstance(test, ast.Call) and not test.args and not test.keywords:
        name = qualname(test.func)
        if name in TRUE_WHILE_COMPILING:
            return True
        if name in FALSE_WHILE_COMPILING:
            return False
        leaf = test.func.attr if isinstance(test.func, ast.Attribute) else getattr(test.func, "id", None)
        if leaf in TRUE_WHILE_COMPILING_NAMES:
            return True
        return None
    if isinstance(test, (ast.Name, ast.Attribute)):
        name = qualname(test)
        if name in FALSE_CONSTANT_NAMES or (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"):
            return False
    return None


def _fixed_comparison(test: ast.Compare, fixed: Mapping[str, Given]) -> bool | None:
    """`name is None`, `name == "warn"` (either side) where `fixed` knows enough of `name`."""
    if len(test.ops) != 1:
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Name) and isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(left, ast.Name) and left.id in fixed and isinstance(right, ast.Constant)):
        return None
    return fixed[left.id].compared(test.ops[0], right)
