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
- methods of nn.Module other than `forward` and the inference entry points users compile beside
  it (`infer`, `generate`, `sample`, `encode`, `decode`...): the forward, and what it calls, is the
  model's compiled code; and every method of a class on a base from another file (a Dataset, an Optimizer, an image
  processor: the framework calls them);
- functions the file calls only from code known to run outside compiled code (an `__init__`,
  another method of a module, a training loop, the module's top level): they run there too;
- training and I/O code: a function that calls `.backward()`, an optimizer's `.zero_grad()`,
  `torch.save`/`torch.load`, or `torch.compile` itself;
- tests (`test_*.py`, `*_test.py`, `conftest.py`, functions named `test*`), `main`, dunder methods
  (but `__call__`) and properties;
- data-pipeline and optimizer code by its place: files under a `data/`, `datasets/`, `transforms/`,
  `augmentation/`, `preprocessing/` or `optim/` folder, and `transforms.py`, `mixup.py`,
  `dataset.py` and the like (issue 16: most of timm's findings were in its augmentation code);
- functions decorated by anything but `staticmethod`, `classmethod`, torch's own decorators and
  the file's own decorators that return a wrapper calling them (`@app.route`, `@pytest.fixture`:
  something else calls them).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Container, Iterator
from pathlib import PurePath

from ..astwalk import child_nodes, walk
from .decorators import returned_wrapper
from .kinds import TENSOR_KINDS
from .param_evidence import tensor_evidence
from .symbols import ClassInfo, ModuleIndex, annotation_kind, decorator_target, plain_class
from .tensors import takes_tensor_argument

_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest)\.py$")
_NOT_COMPILED_NAME = re.compile(r"^(test|main$)|^__(?!call__)\w+__$")  # `__call__` is what calling an instance runs
# Calls that mark training or I/O code (attribute names, and torch functions by qualified name)
_RUN_ONLY_METHODS = frozenset({"backward", "zero_grad"})
_RUN_ONLY_FUNCTIONS = frozenset({"torch.save", "torch.load", "torch.compile", "torch._dynamo.optimize"})
_RUN_ONLY_WORDS = ("backward", "zero_grad", "save", "load", "compile", "optimize")
_PIPELINE_FOLDERS = frozenset({"data", "datasets", "dataset", "dataloaders", "transforms", "augmentation", "augmentations", "preprocessing", "optim", "optimizers"})
_PIPELINE_FILES = frozenset({"transforms", "transform", "augment", "augmentation", "augmentations", "mixup", "random_erasing", "auto_augment", "dataset", "datasets"})
_KEPT_DECORATORS = frozenset({"staticmethod", "classmethod"})
# Methods of an nn.Module that users compile beside (or instead of) `forward`: inference entry
# points such as torchaudio Tacotron2's `decoder.infer`, a VAE's `decode`, a sampler's `sample`.
_ENTRY_METHOD_NAMES = frozenset({"infer", "inference", "generate", "sample", "predict", "encode", "decode"})


def uncompiled_candidates(
    index: ModuleIndex,
    path: str,
    text_of: Callable[[ast.AST], str],
    walked: Container[object],
    root: PurePath | None = None,
) -> Iterator[tuple[ast.FunctionDef, ClassInfo | None]]:
    """The module's functions and methods that no compiled code reached (`walked`: id() of the
    functions analysed so far, which grows as the caller walks what this yields) and that work on
    tensors, see the module docstring: those the file does not call first, in source order, then
    those it calls from code not known to run elsewhere and that no walk reached."""
    if _TEST_FILE.match(PurePath(path).name) or _data_pipeline(path, root) or not any(target.split(".", 1)[0] == "torch" for target in index.imports.values()):
        return
    owned: list[tuple[ast.FunctionDef, ClassInfo | None]] = [(f, None) for f in index.functions.values()]
    elsewhere: set[int] = set()  # id() of functions known to run outside compiled code
    for info in index.classes.values():
        if info.is_module:
            entries = [m for name, m in info.methods.items() if name == "forward" or name in _ENTRY_METHOD_NAMES]
            owned.extend((m, info) for m in entries)
            elsewhere |= {id(m) for m in info.methods.values() if m not in entries}
        elif plain_class(index, info) and not info.is_autograd_function:  # autograd.Function: its own tracing rules
            owned.extend((method, info) for method in info.methods.values())
        else:
            elsewhere |= {id(m) for m in info.methods.values()}
    eligible = []
    for function, cls in owned:
        if id(function) in walked or id(function) in index.disabled or id(function) in index.opaque:
            continue
        if _NOT_COMPILED_NAME.match(function.name) or not _plain_decorators(function, index) or _runs_training(function, index, text_of):
            elsewhere.add(id(function))
        elif _takes_tensors(function, cls, index, text_of):
            eligible.append((function, cls))
    # Callers first: a function the file calls is walked from its caller, where that is checked,
    # with what the caller passes. One the file calls only from code known to run outside compiled
    # code (an `__init__`, another method of a module, a training loop, the module's top level)
    # runs there too; one called from anything else (a function that only passes tensors on,
    # with no evidence of its own) is checked itself.
    everything = [*index.functions.values(), *(m for info in index.classes.values() for m in info.methods.values())]
    callers = _callers(index.source, [(f, c is not None) for f, c in eligible], everything, index.tree)
    for function, cls in eligible:
        if id(function) not in callers and id(function) not in walked:
            yield function, cls
    for function, cls in eligible:
        found = callers.get(id(function))
        if found is not None and id(function) not in walked and any(c in walked or (c is not None and c not in elsewhere) for c in found):
            yield function, cls


def _data_pipeline(path: str, root: PurePath | None) -> bool:
    """Whether the file is data-pipeline or optimizer code by its place in the package (a
    `data/`, `transforms/` or `optim/` folder, a `transforms.py`): code that runs in data loaders
    and training steps, not in a compiled model. timm 1.0.31 had 60 of its 83 such findings in
    `timm/data` (random erasing, mixup). Folders count below the configuration's root where there
    is one, else the file's two nearest (a project kept under `/data/...` is not a pipeline)."""
    file = PurePath(path)
    if file.stem in _PIPELINE_FILES:
        return True
    folders = file.parts[:-1]
    if root is not None and file.is_absolute():
        try:
            folders = file.relative_to(root).parts[:-1]
        except ValueError:
            folders = folders[-2:]
    else:
        folders = folders[-2:]  # not the folders above a project (`/data/projects/...`)
    return any(part in _PIPELINE_FOLDERS for part in folders)


def _callers(
    text: str, candidates: list[tuple[ast.FunctionDef, bool]], functions: list[ast.FunctionDef], tree: ast.Module | None = None
) -> dict[int, set[int | None]]:
    """For each candidate the module's text calls (`name(` not after a dot or a name character for
    a function, `.name(` for a method): id() of the functions of `functions` whose lines hold the
    calls, None for a call outside them. Read from the text with one regular expression per kind
    (not a walk of every function: this runs on every keystroke); a name in a string or a comment
    inside a function counts as a call, which only makes the candidate depend on that "caller".
    Outside the functions such a mention would make the candidate run at import time only, so
    there a match counts only where `tree` has the call: the module docstring of RAFT's
    `sequence_loss` quotes `loss, metrics = sequence_loss(...)` from the training script."""
    plain = {f.name for f, method in candidates if not method and text.count(f"{f.name}(") > 1}
    methods = {f.name for f, method in candidates if method and f".{f.name}(" in text}
    if not plain and not methods:
        return {}
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    spans = sorted((f.lineno, f.end_lineno or f.lineno, id(f)) for f in functions)
    firsts = [span[0] for span in spans]

    def enclosing(line: int) -> int | None:
        at = bisect.bisect_right(firsts, line) - 1
        return spans[at][2] if at >= 0 and spans[at][1] >= line else None

    def calls(pattern: str, names: set[str]) -> dict[str, list[int]]:
        lines: dict[str, list[int]] = {}
        if names:
            alternatives = "|".join(re.escape(name) for name in sorted(names))
            for match in re.finditer(pattern.format(alternatives), text):
                lines.setdefault(match.group(1), []).append(bisect.bisect_right(starts, match.start()))
        return lines

    plain_lines = calls(r"(?<![\w.])({})\s*\(", plain)
    method_lines = calls(r"\.({})\s*\(", methods)
    outside: set[tuple[str, int]] | None = None  # the calls outside `functions`, found once asked
    found: dict[int, set[int | None]] = {}
    for function, method in candidates:
        lines = (method_lines if method else plain_lines).get(function.name, [])
        others = {enclosing(line) for line in lines if line != function.lineno}  # not its own `def` line
        if None in others and tree is not None:
            outside = _calls_outside(tree, functions) if outside is None else outside
            if not any(enclosing(line) is None and (function.name, line) in outside for line in lines):
                others.discard(None)  # only mentioned there, in a docstring or a comment
        if others:
            found[id(function)] = others
    return found


def _calls_outside(tree: ast.Module, functions: list[ast.FunctionDef]) -> set[tuple[str, int]]:
    """(called name, line of the name) of each call outside the bodies of `functions`: the module's
    top level, class bodies, decorators and default values."""
    skipped = {id(f) for f in functions}
    found: set[tuple[str, int]] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) in skipped:
            stack.extend([*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)])
            continue
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                found.add((node.func.id, node.func.lineno))
            elif isinstance(node.func, ast.Attribute):
                found.add((node.func.attr, node.func.end_lineno or node.func.lineno))
        stack.extend(child_nodes(node))
    return found


def _plain_decorators(function: ast.FunctionDef, index: ModuleIndex) -> bool:
    """Whether every decorator leaves the function called as written (torch's own, such as
    `@torch.no_grad()`, and `staticmethod`/`classmethod`), or wrapped by a decorator of the file
    whose returned wrapper calls it (kornia's `@perform_keep_shape_image` on `equalize`): a call
    of the decorated name still runs it, where its callers are, not in a framework's own code."""
    for decorator in function.decorator_list:
        target = decorator_target(decorator)
        if isinstance(target, ast.Name) and target.id in _KEPT_DECORATORS:
            continue
        if isinstance(target, ast.Name) and target.id in index.functions and returned_wrapper(index.functions[target.id]) is not None:
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
    if any(_declares_tensors(index.param_annotation(function, arg), index) for arg in params):
        return True
    unannotated = [arg.arg for arg in params if arg.annotation is None]
    return bool(unannotated) and bool(tensor_evidence(text_of(function), unannotated, lambda callee: imported_tensor_call(index, callee)))


def imported_tensor_call(index: ModuleIndex, callee: str) -> bool:
    """Whether passing a value to `callee` (dotted source text: `torch.cat`, `F.pad`) shows it is a
    tensor, by the module's imports alone (no class or local imports to resolve names by)."""
    root, _, rest = callee.partition(".")
    target = index.imports.get(root)
    return target is not None and takes_tensor_argument(f"{target}.{rest}" if rest else target)


def _declares_tensors(annotation: ast.expr | None, index: ModuleIndex) -> bool:
    """Whether a parameter's annotation says it holds tensors: a tensor kind, or a tensor type
    anywhere inside it (`List[Tensor]` for torch's `clip_grad_norm_`, `Union[Tensor, List[Tensor]]`
    for torchvision's `make_grid`): the function works on tensors whatever else it accepts."""
    if annotation is None:
        return False
    if annotation_kind(annotation, index) in TENSOR_KINDS:
        return True
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # `"List[Tensor]"`
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return False
    return any(
        isinstance(node, (ast.Name, ast.Attribute)) and annotation_kind(node, index) in TENSOR_KINDS
        for node in walk(annotation)
        if node is not annotation
    )


def _runs_training(function: ast.FunctionDef, index: ModuleIndex, text_of: Callable[[ast.AST], str]) -> bool:
    """Whether `function` steps an optimizer, runs backward, saves, loads or compiles."""
    text = text_of(function)
    if not any(word in text for word in _RUN_ONLY_WORDS):  # most functions: no walk
        return False
    for node in walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _RUN_ONLY_METHODS:
                return True
            if (index.qualname(func) or "") in _RUN_ONLY_FUNCTIONS:
                return True
    return False
