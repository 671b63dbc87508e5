"""Functions nothing known compiles, that work on tensors: checked as if compiled, reported apart.

A loss in `losses.py` is compiled from `train.py`; a metric is compiled inside a Lightning module
in another package. Checked alone, nothing in its file compiles it, and a checker that looked only
at known-compiled code answered "No graph breaks found" for a function with `.item()` in it. These
functions are walked after the compiled ones (analysis/module.py) and their findings are marked
`if_compiled`: information severity, "a break if this is compiled", no fix until the user names
the function compiled (`[tool.graphmend] compiled`), since a rewrite of code that is never compiled
only costs readability. `check-uncompiled = false` (or `--compiled-only`) leaves them out.

A candidate takes tensors by its signature or its body: a parameter annotated as a tensor, or one
the body uses as only a tensor is used (`x.view(...)`, `x.shape`, `torch.cat([x, ...])`:
param_evidence.tensor_evidence). Left out, as code that is run but not compiled:
- methods of nn.Module other than `forward` (the forward, and what it calls, is the model's compiled
  code), and every method of a class on a base from another file (a Dataset, an Optimizer, an image
  processor: the framework calls them);
- functions the file calls only from code that is not a candidate (an `__init__`, a training loop,
  the module's top level): where the file shows the callers, they run outside compiled code;
- training and I/O code: a function that calls `.backward()`, an optimizer's `.zero_grad()`,
  `torch.save`/`torch.load`, or `torch.compile` itself;
- tests (`test_*.py`, `*_test.py`, `conftest.py`, functions named `test*`), `main`, dunder methods and properties;
- functions decorated by anything but `staticmethod`, `classmethod` and torch's own decorators
  (`@app.route`, `@pytest.fixture`: something else calls them).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import PurePath

from .kinds import TENSOR_KINDS
from .param_evidence import tensor_evidence
from .symbols import ClassInfo, ModuleIndex, annotation_kind, decorator_target, plain_class
from .tensors import takes_tensor_argument

_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
_NOT_COMPILED_NAME = re.compile(r"^(test|main$)|^__(?!call__)\w+__$")  # `__call__` is what calling an instance runs
# Calls that mark training or I/O code (attribute names, and torch functions by qualified name)
_RUN_ONLY_METHODS = frozenset({"backward", "zero_grad"})
_RUN_ONLY_FUNCTIONS = frozenset({"torch.save", "torch.load", "torch.compile", "torch._dynamo.optimize"})
_KEPT_DECORATORS = frozenset({"staticmethod", "classmethod"})


def uncompiled_candidates(
    index: ModuleIndex,
    path: str,
    text_of: Callable[[ast.AST], str],
    walked: set[int],
) -> Iterator[tuple[ast.FunctionDef, ClassInfo | None]]:
    """The module's functions and methods, in source order, that no compiled code reached (`walked`:
    id() of the functions analysed as compiled) and that work on tensors; see the module docstring."""
    if _TEST_FILE.match(PurePath(path).name) or not any(target.split(".", 1)[0] == "torch" for target in index.imports.values()):
        return
    owned: list[tuple[ast.FunctionDef, ClassInfo | None]] = [(f, None) for f in index.functions.values()]
    for info in index.classes.values():
        if info.is_module:
            forward = info.methods.get("forward")
            owned.extend([(forward, info)] if forward is not None else [])
        elif plain_class(index, info) and not info.is_autograd_function:  # autograd.Function: its own tracing rules
            owned.extend((method, info) for method in info.methods.values())
    eligible = [
        (function, cls)
        for function, cls in owned
        if id(function) not in walked
        and id(function) not in index.disabled
        and id(function) not in index.opaque
        and not _NOT_COMPILED_NAME.match(function.name)
        and _plain_decorators(function, index)
        and _takes_tensors(function, cls, index, text_of)
        and not _runs_training(function, index)
    ]
    # Callers first: a function the file calls is walked from its caller, where that is checked,
    # with what the caller passes. One the file calls only from code that is not (an `__init__`, a
    # training loop, the module's top level) runs outside compiled code.
    text = index.source
    called = [(f, c) for f, c in eligible if _called_in(text, f.name, c is not None)]
    for function, cls in eligible:
        if (function, cls) not in called and id(function) not in walked:
            yield function, cls
    if not called:
        return
    everything = [*index.functions.values(), *(m for info in index.classes.values() for m in info.methods.values())]
    callers = _callers(everything, {f.name for f, _ in called})
    checked = {id(f) for f, _ in eligible}
    for function, cls in called:
        if id(function) not in walked and any(caller in walked or caller in checked for caller in callers.get(function.name, ())):
            yield function, cls


def _callers(functions: list[ast.FunctionDef], names: set[str]) -> dict[str, set[int]]:
    """For each of `names`: id() of those of `functions` that call a function or method of that
    name (nested functions count as their outer function's code)."""
    found: dict[str, set[int]] = {}
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name in names and node is not function:
                    found.setdefault(name, set()).add(id(function))
    return found


def _called_in(text: str, name: str, method: bool) -> bool:
    """Whether the module's text calls `name` anywhere but its own `def` line: `.name(` for a
    method, `name(` not after a dot or another name character for a function."""
    if method:
        return f".{name}(" in text
    if text.count(f"{name}(") < 2:  # the `def` line only: a substring count first
        return False
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}\s*\(", text)) > 1


def _plain_decorators(function: ast.FunctionDef, index: ModuleIndex) -> bool:
    """Whether every decorator leaves the function called as written (torch's own, such as
    `@torch.no_grad()`, and `staticmethod`/`classmethod`)."""
    for decorator in function.decorator_list:
        target = decorator_target(decorator)
        if isinstance(target, ast.Name) and target.id in _KEPT_DECORATORS:
            continue
        qualified = index.qualname(target) or ""
        if not qualified.startswith("torch."):
            return False
    return True


def _parameters(function: ast.FunctionDef, cls: ClassInfo | None) -> list[ast.arg]:
    args = function.args
    positional = args.posonlyargs + args.args
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    if cls is not None and positional and not is_static:
        positional = positional[1:]  # self, or cls of a classmethod
    return positional + args.kwonlyargs


def _takes_tensors(function: ast.FunctionDef, cls: ClassInfo | None, index: ModuleIndex, text_of: Callable[[ast.AST], str]) -> bool:
    params = _parameters(function, cls)
    if any(annotation_kind(index.param_annotation(function, arg), index) in TENSOR_KINDS for arg in params):
        return True
    unannotated = [arg.arg for arg in params if arg.annotation is None]

    def torch_call(callee: str) -> bool:  # `torch.cat`, `F.pad`: by the module's imports
        root, _, rest = callee.partition(".")
        target = index.imports.get(root)
        return target is not None and takes_tensor_argument(f"{target}.{rest}" if rest else target)

    return bool(unannotated) and bool(tensor_evidence(text_of(function), unannotated, torch_call))


def _runs_training(function: ast.FunctionDef, index: ModuleIndex) -> bool:
    """Whether `function` steps an optimizer, runs backward, saves, loads or compiles."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _RUN_ONLY_METHODS:
                return True
            if (index.qualname(func) or "") in _RUN_ONLY_FUNCTIONS:
                return True
    return False
