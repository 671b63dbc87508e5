"""GM3xx: side effects and I/O that dynamo will not put in a graph.

A graph is a pure function of tensors. Printing, logging, warnings, files, clocks, Python's random
module, process queries, introspection and serialization are either side effects that must happen
in order or values that change on every call; dynamo ends the graph around each of them and runs
the call eagerly. Most entries are calls into C code that dynamo marks as skipped.

Each table row was measured on torch 2.13 and is checked again by the corpus test. Note what is
*not* here because dynamo handles it: `random.randint`, `random.uniform`, `random.randrange`,
`numpy.random.seed`, `numpy.random.shuffle`, `os.environ.get`, `os.getenv`, `os.path.join`, `platform.system`,
`tempfile.gettempdir`, `torch.seed`, `warnings.catch_warnings`.

Only the logger rule needs code; the others are call tables, declared in catalogue.toml (`calls`)
and built by declared.py.
"""

from __future__ import annotations

import ast

from ..kinds import Kind
from .base import Rule, RuleContext


class LoggerMethod(Rule):
    code = "GM306"
    callee_kinds = frozenset({Kind.LOGGER})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if isinstance(node.func, ast.Attribute):  # logger.info(...), not logging.getLogger(...)
            ctx.report(self, node)


class FunctionAttributeSet(Rule):
    """`buffered_arange.buf = torch.LongTensor()` inside `buffered_arange` (fairseq's memo),
    `counter.calls += 1`, `setattr(f, "cache", v)`: an attribute stored on a function of the file.
    Dynamo has no rule for writing a function object's attribute ("setattr() on unsupported type",
    measured on torch 2.13 for a module-level function, its own name inside it, `setattr(...)`, an
    augmented store and a closure bound at module level); writes to a class, a module or an object
    trace, as does one to a function defined inside the compiled code. Only the file's own
    undecorated functions are known to be functions: a decorator may return another object (an
    `lru_cache` wrapper takes attributes without a break)."""

    code = "GM526"
    store_types = (ast.Attribute,)
    statement_types = (ast.AugAssign,)
    qualnames = frozenset({"builtins.setattr"})

    def check_store(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Attribute)
        self._report_if_function(node, node.value, ctx)

    def check_statement(self, node: ast.stmt, ctx: RuleContext) -> None:
        assert isinstance(node, ast.AugAssign)
        if isinstance(node.target, ast.Attribute):
            self._report_if_function(node.target, node.target.value, ctx)

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if len(node.args) >= 2:
            self._report_if_function(node, node.args[0], ctx)

    def _report_if_function(self, node: ast.AST, owner: ast.expr, ctx: RuleContext) -> None:
        function = ctx.module_function(owner)
        if function is not None:
            ctx.report(self, node, function=function.name)
