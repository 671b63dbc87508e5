"""Setting a torch._dynamo.config flag in a module, and reading whether the module sets it.

Shared by the fixers that offer a flag (unsafe.py's ConfigFlagFixer, moe.py's dispatch when it
needs data-dependent shapes): the line goes where module code may first use torch, with a comment
that says what the flag changes.
"""

from __future__ import annotations

import ast

from ..analysis.symbols import RNN_FLAG, SCALAR_FLAG, SHAPE_FLAG
from ..astwalk import walk
from ..findings import Edit, Span
from .context import FixContext

_FLAG_COMMENT = {
    SCALAR_FLAG: "Trace .item(), int(t) and tensor sizes as symbolic numbers instead of breaking the graph",
    SHAPE_FLAG: "Trace nonzero, boolean masks and unique with data-dependent shapes instead of breaking the graph",
    RNN_FLAG: "Trace nn.LSTM, nn.GRU and nn.RNN instead of running the calling function eagerly",
}


def flag_edit(ctx: FixContext, flag: str) -> Edit:
    """`torch._dynamo.config.<flag> = True` with a comment saying why, where module code may first
    use torch: after the import of torch, even one inside `if is_torch_available():` below the
    imports (with `import torch` added when the module lacks it)."""
    torch = ctx.torch_name()
    import_edit = ctx.import_edit()
    line, indent = (ctx.after_imports_line(), "") if import_edit is not None else ctx.torch_bound_at()
    why = _FLAG_COMMENT[flag]
    text = (import_edit.new_text if import_edit is not None else "") + f"{indent}# {why} (set by graphmend)\n{indent}{torch}._dynamo.config.{flag} = True\n"
    return Edit(Span(line, 0, line, 0), text)


def module_flag_value(ctx: FixContext, flag: str) -> bool | None:
    """True when the module sets `torch._dynamo.config.<flag> = True`, False when it sets it to
    anything else (an explicit `= False` is a decision), None when it does not set it."""
    if flag not in ctx.text:  # the common case, without walking the module (asked once per finding)
        return None
    values = ctx.remember(("flag-assignments", flag), lambda: _flag_assignments(ctx, flag))
    if not values:
        return None
    return all(isinstance(v, ast.Constant) and v.value is True for v in values)


def _flag_assignments(ctx: FixContext, flag: str) -> list[ast.expr]:
    """The values the module assigns to `torch._dynamo.config.<flag>`, in any statement."""
    return [
        node.value for node in walk(ctx.tree)
        if isinstance(node, ast.Assign) and any(ctx.qualname(t) == f"torch._dynamo.config.{flag}" for t in node.targets)
    ]
