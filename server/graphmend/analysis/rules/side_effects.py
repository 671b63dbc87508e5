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

_HOIST = "Move the call out of the compiled code (into the caller) and pass its result in as an argument."
_GUARD = (
    "`graphmend fix` moves the call into a custom op with an ordered effect: one graph, and the same "
    "output, in program order, when the compiled code runs (safe). Otherwise move it to the caller, or "
    "guard it with `if not torch.compiler.is_compiling():` (it then runs only in eager mode)."
)


class Print(CallTableRule):
    code = "GM301"
    name = "print"
    message = "`{subject}` writes to the console"
    why = "output is a side effect dynamo does not put in a graph, so it ends the graph to run the call eagerly"
    fix = (
        f"{_GUARD} `torch._dynamo.config.reorderable_logging_functions = {{print}}` defers prints until "
        "after the graph, but then they show tensors' final values, and torch 2.13 drops those made in "
        "functions dynamo inlines."
    )
    imports = ("sys",)
    table = {
        "builtins.print": 'print("step")',
        "sys.stdout.write": 'sys.stdout.write("")',
        "sys.stderr.write": 'sys.stderr.write("")',
        "sys.stdout.flush": "sys.stdout.flush()",
        "sys.stderr.flush": "sys.stderr.flush()",
    }
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
    name = "input"
    message = "`{subject}` reads from the terminal"
    why = "interactive input is I/O dynamo cannot trace, so it ends the graph"
    fix = _HOIST
    table = {"builtins.input": "input()"}
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
    name = "debugger"
    message = "`{subject}` enters the debugger"
    why = "a debugger stops the program, which dynamo cannot put in a graph"
    fix = "Remove it before compiling, or guard it with `if not torch.compiler.is_compiling():`."
    imports = ("pdb",)
    table = {"builtins.breakpoint": "breakpoint()", "pdb.set_trace": "pdb.set_trace()"}
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
    name = "file-io"
    message = "`{subject}` touches the file system"
    why = "file I/O is a side effect dynamo does not trace, so it ends the graph to run the call eagerly"
    fix = _HOIST
    imports = ("io", "os", "glob", "shutil")
    table = {
        "builtins.open": "open(os.devnull).close()",
        "torch.save": "torch.save(y, io.BytesIO())",
        "os.listdir": 'os.listdir(".")',
        "os.path.exists": 'os.path.exists("/tmp")',
        "os.path.isfile": 'os.path.isfile("/tmp")',
        "os.path.isdir": 'os.path.isdir("/tmp")',
        "os.makedirs": 'os.makedirs("/tmp", exist_ok=True)',
        "os.stat": 'os.stat("/tmp")',
        "glob.glob": 'glob.glob("*.nothing")',
        "shutil.which": 'shutil.which("ls")',
    }
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
    name = "logging-module"
    message = "`{subject}` calls the logging module"
    why = "dynamo cannot trace into `logging` (it breaks inside logging/__init__.py), so it ends the graph"
    fix = (
        f"{_GUARD} `torch._dynamo.config.ignore_logging_functions` can drop the call under compile instead."
    )
    imports = ("logging",)
    table = {
        "logging.debug": 'logging.debug("step")',
        "logging.info": 'logging.info("step")',
        "logging.warning": 'logging.warning("step")',
        "logging.warn": 'logging.warn("step")',
        "logging.error": 'logging.error("step")',
        "logging.critical": 'logging.critical("step")',
        "logging.exception": 'logging.exception("step")',
        "logging.log": 'logging.log(10, "step")',
        "logging.getLogger": 'logging.getLogger("graphmend.example")',
        "logging.basicConfig": "logging.basicConfig()",
    }
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
    name = "logger-method"
    message = "`{subject}` calls a logging.Logger method"
    why = "dynamo does not support logging.Logger methods outside export, so it ends the graph here"
    fix = (
        f"{_GUARD} `torch._dynamo.config.ignore_logging_functions = {{logging.Logger.warning}}` drops the "
        "call under compile instead."
    )
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
    name = "warnings"
    message = "`{subject}` calls the warnings module"
    why = "dynamo marks `warnings` functions as skipped, so it ends the graph to call them eagerly"
    fix = _GUARD
    imports = ("warnings",)
    table = {
        "warnings.warn": 'warnings.warn("careful")',
        "warnings.simplefilter": 'warnings.simplefilter("default")',
        "warnings.filterwarnings": 'warnings.filterwarnings("default")',
        "warnings.warn_explicit": 'warnings.warn_explicit("careful", UserWarning, "f.py", 1)',
    }
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
    name = "clock"
    message = "`{subject}` reads the clock"
    why = "the time changes on every call, so it cannot be a constant in a graph; dynamo ends the graph"
    fix = "Time the compiled call from outside, or use `torch.profiler`; pass timestamps in as arguments."
    imports = ("time", "datetime")
    table = {
        "time.time": "time.time()",
        "time.perf_counter": "time.perf_counter()",
        "time.monotonic": "time.monotonic()",
        "time.process_time": "time.process_time()",
        "time.time_ns": "time.time_ns()",
        "time.perf_counter_ns": "time.perf_counter_ns()",
        "time.monotonic_ns": "time.monotonic_ns()",
        "time.sleep": "time.sleep(0)",
        "time.strftime": 'time.strftime("%Y")',
        "time.localtime": "time.localtime()",
        "time.gmtime": "time.gmtime()",
        "datetime.datetime.now": "datetime.datetime.now()",
        "datetime.datetime.utcnow": "datetime.datetime.utcnow()",
        "datetime.datetime.today": "datetime.datetime.today()",
        "datetime.date.today": "datetime.date.today()",
    }
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
    name = "non-torch-random"
    message = "`{subject}` uses a random number generator dynamo cannot trace"
    why = (
        "Python's and NumPy's generators (and seeding torch's global generator) are state outside the graph, "
        "so dynamo ends the graph to call them eagerly"
    )
    fix = (
        "Draw random numbers with torch (`torch.rand`, `torch.randint`), which dynamo traces; seed once, "
        "outside the compiled code. Note: this changes the random stream, not its distribution."
    )
    imports = ("random", "numpy", "uuid", "os", "secrets")
    table = {
        "random.random": "random.random()",
        "random.choice": "random.choice([1, 2])",
        "random.choices": "random.choices([1, 2])",
        "random.shuffle": "random.shuffle([1, 2])",
        "random.seed": "random.seed(0)",
        "random.gauss": "random.gauss(0, 1)",
        "random.normalvariate": "random.normalvariate(0, 1)",
        "random.sample": "random.sample([1, 2, 3], 2)",
        "numpy.random.rand": "numpy.random.rand()",
        "numpy.random.randn": "numpy.random.randn()",
        "numpy.random.randint": "numpy.random.randint(0, 3)",
        "numpy.random.random": "numpy.random.random()",
        "numpy.random.choice": "numpy.random.choice([1, 2])",
        "numpy.random.uniform": "numpy.random.uniform()",
        "numpy.random.normal": "numpy.random.normal()",
        "numpy.random.permutation": "numpy.random.permutation(3)",
        "torch.manual_seed": "torch.manual_seed(0)",
        "torch.random.manual_seed": "torch.random.manual_seed(0)",
        "torch.cuda.manual_seed": "torch.cuda.manual_seed(0)",
        "torch.initial_seed": "torch.initial_seed()",
        "torch.get_rng_state": "torch.get_rng_state()",
        "uuid.uuid4": "uuid.uuid4()",
        "uuid.uuid1": "uuid.uuid1()",
        "os.urandom": "os.urandom(2)",
        "secrets.token_hex": "secrets.token_hex(2)",
    }
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
    name = "process-query"
    message = "`{subject}` queries or changes the process or the machine"
    why = "dynamo marks these calls as skipped (they read state outside the program), so it ends the graph"
    fix = _HOIST
    imports = ("os", "subprocess", "socket", "getpass", "threading")
    table = {
        "os.getpid": "os.getpid()",
        "os.getppid": "os.getppid()",
        "os.getcwd": "os.getcwd()",
        "os.cpu_count": "os.cpu_count()",
        "os.system": 'os.system("true")',
        "subprocess.run": 'subprocess.run(["true"])',
        "subprocess.check_output": 'subprocess.check_output(["true"])',
        "socket.gethostname": "socket.gethostname()",
        "getpass.getuser": "getpass.getuser()",
        "threading.current_thread": "threading.current_thread()",
        "threading.get_ident": "threading.get_ident()",
        "torch.get_num_threads": "torch.get_num_threads()",
        "torch.set_num_threads": "torch.set_num_threads(torch.get_num_threads())",
        "torch.cuda.device_count": "torch.cuda.device_count()",
        "torch.backends.cudnn.is_available": "torch.backends.cudnn.is_available()",
    }
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
    name = "introspection"
    message = "`{subject}` inspects the running program"
    why = "frames, stacks and namespaces are interpreter state dynamo cannot trace, so it ends the graph"
    fix = _HOIST
    imports = ("inspect", "sys", "traceback", "gc")
    table = {
        "inspect.currentframe": "inspect.currentframe()",
        "inspect.stack": "inspect.stack()",
        "inspect.signature": "inspect.signature(len)",
        "sys._getframe": "sys._getframe()",
        "sys.getsizeof": "sys.getsizeof(1)",
        "traceback.format_stack": "traceback.format_stack()",
        "traceback.print_stack": "traceback.print_stack(file=sys.stdout)",
        "traceback.extract_stack": "traceback.extract_stack()",
        "gc.collect": "gc.collect()",
        "builtins.dir": "dir(y)",
        "builtins.globals": "globals()",
        "builtins.exec": 'exec("1")',
        "builtins.compile": 'compile("1", "<string>", "eval")',
    }
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
    name = "serialization"
    message = "`{subject}` serialises or hashes data"
    why = "dynamo cannot trace these C-implemented encoders, so it ends the graph to run them eagerly"
    fix = _HOIST
    imports = ("json", "pickle", "base64", "hashlib", "zlib", "io")
    table = {
        "json.dumps": 'json.dumps({"a": 1})',
        "json.loads": 'json.loads("1")',
        "json.dump": 'json.dump({"a": 1}, io.StringIO())',
        "pickle.dumps": "pickle.dumps(1)",
        "pickle.loads": 'pickle.loads(b"\\x80\\x04K\\x01.")',
        "base64.b64encode": 'base64.b64encode(b"a")',
        "hashlib.md5": 'hashlib.md5(b"a")',
        "hashlib.sha256": 'hashlib.sha256(b"a")',
        "zlib.crc32": 'zlib.crc32(b"a")',
    }
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

RULES: tuple[type[Rule], ...] = (
    Print,
    Input,
    Debugger,
    FileIO,
    LoggingModule,
    LoggerMethod,
    Warnings,
    Clock,
    PythonRandom,
    ProcessQuery,
    Introspection,
    Serialization,
)
