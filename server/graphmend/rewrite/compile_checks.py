"""Module-level predicates a rewrite calls to keep the original code for the inputs it cannot prove.

Some rewrites are exact only when shapes and dtypes line up (multiplying by an all-ones mask gives
back the tensor only if the mask broadcasts into it and does not widen its dtype). Static analysis
seldom knows a parameter's dtype, but dynamo does: shapes, dtypes and `requires_grad` are known
while tracing, so a Python `if` on them costs no graph break and is decided once per compiled
specialisation (dynamo guards on it). The rewrite tests the predicate first and falls back to the
original test when it is false, so every input keeps its original result:

    if mask is not None and (_graphmend_product_keeps(x, mask[:, None]) or not torch.all(mask == 1)):

The predicates are added once per module, right after its `import torch`, like the ordered-op helper.
"""

from __future__ import annotations

from ..analysis.guards import TRUE_WHEN_FIXED_NAMES
from ..findings import Edit, Span
from .context import FixContext
from .model import DeclineError

PRODUCT_KEEPS = "_graphmend_product_keeps"
assert PRODUCT_KEEPS in TRUE_WHEN_FIXED_NAMES  # the analysis treats the test after it as not traced

_PRODUCT_KEEPS_TEXT = '''

def {name}(tensor, factor, same_dtype=True):
    """Whether `tensor * factor` has `tensor`'s shape (and dtype) and sends `factor` no gradient.

    Added by GraphMend: decided from shapes and dtypes only, so under torch.compile it is settled
    while tracing and costs no graph break; where it is False the original test runs.
    """
    return (
        not factor.requires_grad
        and factor.dim() <= tensor.dim()
        and all(f in (1, t) for t, f in zip(reversed(tensor.shape), reversed(factor.shape)))
        and (not same_dtype or {torch}.promote_types(tensor.dtype, factor.dtype) == tensor.dtype)
    )
'''

_TEXTS = {PRODUCT_KEEPS: _PRODUCT_KEEPS_TEXT}


def helper_edits(ctx: FixContext, name: str) -> list[Edit]:
    """The edit defining predicate `name` after the module's `import torch`, or none when the module
    defines it already."""
    if name in ctx.index.functions:
        return []
    line, prefix = helper_insertion(ctx)
    return [Edit(Span(line, 0, line, 0), prefix + _TEXTS[name].format(name=name, torch=ctx.torch_name()) + "\n")]


def helper_insertion(ctx: FixContext) -> tuple[int, str]:
    """Where a module-level helper goes: right after the module's `import torch` (with that import
    first when the module has none). Declines when torch is imported under a condition."""
    import_edit = ctx.import_edit()
    if import_edit is not None:
        return import_edit.span.start_line, import_edit.new_text
    line, indent = ctx.torch_bound_at()
    if indent:
        raise DeclineError("guarded-torch-import", "torch is imported under a condition here, so a helper cannot be defined at module level")
    return line, ""
