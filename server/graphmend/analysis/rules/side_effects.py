"""GM3xx: side effects and I/O that dynamo will not put in a graph.

A graph is a pure function of tensors. Printing, logging, warnings, files, clocks, Python's random
module, process queries, introspection and serialization are either side effects that must happen
in order or values that change on every call; dynamo ends the graph around each of them and runs
the call eagerly. Most entries are calls into C code that dynamo marks as skipped.

Each table row was measured on torch 2.13 and is checked again by the corpus test. Note what is
*not* here because dynamo handles it: `random.randint`, `random.uniform`, `random.randrange`,
`numpy.random.seed`, `os.environ.get`, `os.getenv`, `os.path.join`, `platform.system`,
`tempfile.gettempdir`, `torch.seed`, `warnings.catch_warnings`.
"""

from __future__ import annotations

import ast

from ..kinds import Kind
from .base import CallTableRule, Rule, RuleContext, compiled, example


class Print(CallTableRule):
    code = "GM301"
    breaks = (
        compiled(
            """
            print("starting")  # expect: GM301
            return x + 1
            """,
            note="a break before the first traced op: explain() reports no break, the graph_breaks log does",
        ),
        compiled(
            """
            y = x * 2
            print(  # expect: GM301
                "value",
                y.shape,
            )
            return y + 1
            """,
            note="a multi-line call: dynamo reports its first line, the finding spans all of it",
        ),
    )
    ok = (
        compiled(
            """
            y = x * 2
            if not torch.compiler.is_compiling():
                print("eager only", y)
            return y + 1
            """
        ),
    )


class Input(CallTableRule):
    code = "GM302"
    ok = (
        compiled(
            """
            return input * 2 + input.shape[0]
            """,
            params="input",
            note="a parameter named `input` shadows the builtin",
        ),
    )

class Debugger(CallTableRule):
    code = "GM303"
    ok = (
        example(
            """
            import pdb
            import torch

            @torch.compile
            def f(x):
                debug = pdb.set_trace if x.shape[0] > 100 else None
                return x + 1
            """,
            note="referring to the debugger is not calling it",
        ),
    )

class FileIO(CallTableRule):
    code = "GM304"
    breaks = (
        example(
            """
            import os
            import torch

            @torch.compile
            def f(x):
                y = x * 2
                with open(os.devnull) as handle:  # expect: GM304
                    handle.read()
                return y + 1
            """,
            note="`with open(...)`: dynamo cannot resume under a file object, so it skips the function",
        ),
    )
    ok = (
        example(
            """
            import os
            import torch

            @torch.compile
            def f(x):
                name = os.path.join("checkpoints", os.path.basename("a/b.pt"))
                return x + len(name)
            """,
            note="path arithmetic touches no file",
        ),
    )

class LoggingModule(CallTableRule):
    code = "GM305"
    breaks = (
        example(
            """
            import logging
            import torch

            @torch.compile
            def f(x):
                logging.warning("first")  # expect: GM305
                return x + 1
            """,
            note="before the first traced op: explain() misses it, the graph_breaks log does not",
        ),
    )
    ok = (
        example(
            """
            import logging
            import torch

            @torch.compile
            def f(x):
                if not torch.compiler.is_compiling():
                    logging.info("eager only")
                return x + logging.DEBUG
            """
        ),
    )

class LoggerMethod(Rule):
    code = "GM306"
    callee_kinds = frozenset({Kind.LOGGER})

    def check(self, node: ast.AST, ctx: RuleContext) -> None:
        assert isinstance(node, ast.Call)
        if isinstance(node.func, ast.Attribute):  # logger.info(...), not logging.getLogger(...)
            ctx.report(self, node)

    breaks = (
        example(
            """
            import logging
            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def f(x):
                y = x * 2
                logger.info("computed %s", y.shape)  # expect: GM306
                if logger.isEnabledFor(logging.DEBUG):  # expect: GM306
                    y = y + 1
                return y
            """
        ),
        example(
            """
            import logging
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.log = logging.getLogger("model")
                    self.proj = nn.Linear(4, 4)

                def forward(self, x):
                    self.log.warning("forward")  # expect: GM306
                    return self.proj(x)

            def sample():
                return Model(), (torch.randn(2, 4),), {}
            """,
            note="a logger kept on the module; forward is compiled with the model",
        ),
    )
    ok = (
        example(
            """
            import logging
            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def f(x):
                y = x * 2
                if not torch.compiler.is_compiling():
                    logger.info("eager only")
                return y
            """
        ),
    )


class Warnings(CallTableRule):
    code = "GM307"
    ok = (
        example(
            """
            import warnings
            import torch

            @torch.compile
            def f(x):
                with warnings.catch_warnings():
                    y = x + 1
                return y
            """,
            note="catch_warnings itself is traced; only a break inside it would cost the function",
        ),
    )

class Clock(CallTableRule):
    code = "GM308"
    ok = (
        example(
            """
            import time
            import torch

            @torch.compile
            def f(x, started=0.0):
                with torch.profiler.record_function("block"):
                    y = x * 2
                return y + started
            """,
            note="pass timestamps in; record_function is traced (and ignored)",
        ),
    )

class PythonRandom(CallTableRule):
    code = "GM309"
    ok = (
        example(
            """
            import random
            import torch

            @torch.compile
            def f(x):
                k = random.randint(1, 3)
                return x * k + torch.rand(4)
            """,
            note="dynamo traces random.randint (it specialises on the drawn value) and torch's own RNG",
        ),
    )


class ProcessQuery(CallTableRule):
    code = "GM310"
    ok = (
        example(
            """
            import os
            import torch

            @torch.compile
            def f(x):
                scale = float(os.environ.get("SCALE", "2"))
                name = os.path.join("a", "b")
                return x * scale + len(name) + torch.cuda.is_available()
            """
        ),
    )


class Introspection(CallTableRule):
    code = "GM311"
    ok = (
        compiled(
            """
            act = getattr(torch, "relu")
            scale = 2 if hasattr(x, "shape") else 1
            return act(x) * scale
            """
        ),
    )

class Serialization(CallTableRule):
    code = "GM312"
    ok = (
        compiled(
            """
            key = str(tuple(x.shape))
            table = {key: 2}
            return x * table[key]
            """,
            note="strings of shapes are constants",
        ),
    )
