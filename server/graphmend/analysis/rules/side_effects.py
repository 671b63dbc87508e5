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


