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
- methods of nn.Module other than `forward` (the forward, and what it calls, is the model's compiled code);
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
from .symbols import ClassInfo, ModuleIndex, annotation_kind, decorator_target
from .tensors import takes_tensor_argument

_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
_NOT_COMPILED_NAME = re.compile(r"^(test|main$)|^__\w+__$")
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
        if info.is_autograd_function:
            continue  # its forward/backward run under autograd.Function's own tracing rules
        owned.extend((method, info) for name, method in info.methods.items() if not info.is_module or name == "forward")
    # callers before the helpers they call (those named as called in the file's text come last), so
    # that a helper is walked with what its caller passes and its findings name the caller
    text = index.source
    owned.sort(key=lambda item: (_called_in(text, item[0].name, item[1] is not None), item[0].lineno))
    for function, cls in owned:
        if id(function) in walked or id(function) in index.disabled or id(function) in index.opaque:
            continue
        if _NOT_COMPILED_NAME.match(function.name) or not _plain_decorators(function, index):
            continue
        if _takes_tensors(function, cls, index, text_of) and not _runs_training(function, index):
            yield function, cls


def _called_in(text: str, name: str, method: bool) -> bool:
    """Whether the module's text calls `name` anywhere but its own `def` line (a substring count)."""
    return text.count(f".{name}(" if method else f"{name}(") > (0 if method else 1)


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
