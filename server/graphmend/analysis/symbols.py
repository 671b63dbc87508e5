"""What the names of a module refer to: imports, top-level functions and classes, and the few
module-level objects whose type matters to dynamo (loggers, TorchScript modules, locks, functions
under `torch.compiler.disable`, tensors).

Built once per analysis from the top level of the module, class bodies and `__init__` methods
only; function bodies are left to the walker, which only visits compiled code.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..astwalk import walk
from .guards import FALSE_WHILE_COMPILING, TRUE_WHILE_COMPILING
from .kinds import Kind
from .type_comments import CommentSignature

BUILTIN_NAMES = frozenset(dir(builtins))

COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch._dynamo.optimize", "torch._dynamo.eval_frame.optimize"})
# Decorators that return the function itself, for TorchScript's sake (kornia marks its
# `is_compiling` wrapper `@torch.jit.unused`): dynamo inlines the function as if undecorated.
INERT_DECORATORS = frozenset({"torch.jit.unused", "torch.jit.ignore", "torch.jit.export"})
DISABLE_FUNCTIONS = frozenset(
    {
        "torch.compiler.disable",
        "torch._dynamo.disable",
        "torch._dynamo.eval_frame.disable",
        "torch._disable_dynamo",
        "torch._dynamo.decorators.disable",
    }
)
# Decorators that make a function an opaque operation for dynamo: it puts a call to it in the graph
# (or runs it after tracing) instead of tracing its body, so the body is not compiled code and a
# call to it is not a break. `_graphmend_ordered` is the helper GraphMend's ordered-effect fix
# defines in the fixed module (rewrite/ordered_helper.py): a custom op with an ordered effect.
OPAQUE_DECORATORS = frozenset(
    {
        "torch.library.custom_op",
        "torch._library.custom_ops.custom_op",
        "torch._dynamo.decorators.leaf_function",
        "torch._dynamo.nonstrict_trace",
        "torch._dynamo.decorators.nonstrict_trace",
    }
)
ORDERED_HELPER = "_graphmend_ordered"
# Optimizers and LR schedulers: their `step()`/`zero_grad()` break a compiled function (GM533).
OPTIM_PREFIX = "torch.optim."
JIT_SCRIPT_FUNCTIONS = frozenset({"torch.jit.script"})
LOCK_CLASSES = frozenset(
    {
        "threading.Lock",
        "threading.RLock",
        "threading.Semaphore",
        "threading.BoundedSemaphore",
        "threading.Condition",
        "multiprocessing.Lock",
        "multiprocessing.RLock",
    }
)
LOGGER_FACTORY_SUFFIXES = ("getLogger", "get_logger")
# What makes a sparse tensor, which dynamo does not wrap (GM523).
SPARSE_CONSTRUCTORS = frozenset(
    {
        "torch.sparse_coo_tensor",
        "torch.sparse_csr_tensor",
        "torch.sparse_csc_tensor",
        "torch.sparse_bsr_tensor",
        "torch.sparse_bsc_tensor",
        "torch.sparse_compressed_tensor",
    }
)
SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"})
DYNAMO_CONFIG = "torch._dynamo.config."
SCALAR_FLAG = "capture_scalar_outputs"
SHAPE_FLAG = "capture_dynamic_output_shape_ops"
RNN_FLAG = "allow_rnn"
AUTOGRAD_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


@dataclass
class ClassInfo:
    name: str
    node: ast.ClassDef
    methods: dict[str, ast.FunctionDef] = field(default_factory=dict)
    base_names: list[str | None] = field(default_factory=list)  # qualified names; None if unresolved
    local_bases: list[str] = field(default_factory=list)  # bases defined in this module
    attr_kinds: dict[str, Kind] = field(default_factory=dict)  # self.<attr> as set up in __init__
    # self.<attr> = InFileClass(...) (several when branches assign different classes)
    attr_classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # self.<attr> = nn.Linear(...): the torch.nn class name (the rewrites need to know it is pure)
    attr_torch_classes: dict[str, str] = field(default_factory=dict)
    # self.<attr> = nn.Linear(d, d), nn.LayerNorm(...), nn.GELU(): output shape == input shape
    attr_shape_preserving: set[str] = field(default_factory=set)
    # self.<attr> = nn.ModuleList([InFileClass(...) for ...]) or .append(...)s: the element classes
    attr_element_classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # self.<attr> = a function defined in __init__, or a lambda: calling it is a Python call whose
    # result is whatever the function returns, not a submodule's tensor (bit's `compute_padding`)
    attr_plain_functions: dict[str, ast.FunctionDef | ast.Lambda] = field(default_factory=dict)
    # self.<attr> = module_level_function (mmsegmentation's `self.cls_criterion =
    # binary_cross_entropy`, several where branches pick one): calling it runs that function
    attr_module_functions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # self.<attr> = ImportedClass(...) / module.ImportedClass(...): the class as written (the
    # call sites of its methods are followed into the other file: crossmodule.call_sites)
    attr_imported_classes: dict[str, str] = field(default_factory=dict)
    # self.<attr> = <a parameter of __init__> whose kind __init__ alone does not tell: the
    # parameter's name ("" where two assignments disagree); constructions.py reads the kind from
    # the file's constructions of the class
    attr_params: dict[str, str] = field(default_factory=dict)
    is_module: bool = False
    is_autograd_function: bool = False


@dataclass
class ModuleIndex:
    """The names a module binds at its top level, resolved as far as one file allows."""

    imports: dict[str, str] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    global_kinds: dict[str, Kind] = field(default_factory=dict)
    # module-level names bound once to an instance of an in-file class (`SPEC = Bounds(...)`)
    global_instances: dict[str, str] = field(default_factory=dict)
    # module-level names bound once to a torch.optim optimizer or LR scheduler (`opt = AdamW(...)`)
    # -> the class's qualified name (GM533)
    global_optim_objects: dict[str, str] = field(default_factory=dict)
    # module-level names bound once to a dict, list or tuple display of in-file classes (a registry:
    # torchdiffeq's `SOLVERS = {'bosh3': Bosh3Solver, ...}`) -> those classes: calling an element
    # (`SOLVERS[method](...)`) constructs one of them
    class_registries: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # names bound once in the file (in any scope) to a dict, list or tuple display whose every value
    # constructs an in-file class (`metrics = {1: Accuracy(), 2: Accuracy(top_k=2)}`) -> the classes
    # an element may be and whether iterating the display gives them (a list or tuple, not a dict);
    # None until a call asks (module_state.instance_container computes it from `tree`)
    instance_containers: dict[str, tuple[tuple[str, ...], bool]] | None = None
    # class name -> the calls that construct it by name anywhere in the file; None until asked
    # (constructions.py walks the file once, the first time an attribute set from a parameter is read)
    constructions: dict[str, list[ast.Call]] | None = None
    constructed_kinds: dict[tuple[str, str], Kind | None] = field(default_factory=dict)  # (class, attr) -> kind, memo
    # (class, attr) -> the in-file classes and functions its constructions pass (constructions.py), memo
    constructed_holdings: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    # id(construction call) -> the names its enclosing function binds once, to what; None until asked
    construction_scopes: dict[int, dict[str, ast.expr | None]] | None = None
    tree: ast.Module | None = None
    source: str = ""  # the module's text (module_state.instance_container reads it before walking the tree)
    # id(FunctionDef) -> the kind its `return`s give when it has no annotation (tensors.returned_kind)
    inferred_returns: dict[int, Kind] = field(default_factory=dict)
    # (id(FunctionDef), n) -> which of the n elements its tuple `return`s give are masks (tensors._returned_elements)
    inferred_elements: dict[tuple[int, int], tuple[Kind, ...] | None] = field(default_factory=dict)
    # per (function, element count): the parameter each returned element hands back (tensors._passed_through)
    passed_through: dict[tuple[int, int], tuple[str | None, ...]] = field(default_factory=dict)
    # id(ClassDef) -> the attributes its methods other than __init__ assign (None: it calls setattr)
    set_outside_init: dict[int, frozenset[str] | None] = field(default_factory=dict)
    top_level_names: set[str] = field(default_factory=set)
    disabled: set[int] = field(default_factory=set)  # id() of FunctionDefs under compiler.disable
    # FunctionDefs under compiler.disable(recursive=False): dynamo skips their frame but compiles
    # what they call (regions.find_entries makes those callees entries)
    frame_only: list[ast.FunctionDef] = field(default_factory=list)
    disable_aliases: set[str] = field(default_factory=set)  # module-level names bound to compiler.disable
    # module-level functions that only return what a query dynamo answers while tracing returns
    # (`def is_compiling(): return torch.compiler.is_compiling()`) -> the query's qualname
    query_wrappers: dict[str, str] = field(default_factory=dict)
    opaque: set[int] = field(default_factory=set)  # id() of FunctionDefs that are opaque ops (custom ops)
    owner: dict[int, ClassInfo] = field(default_factory=dict)  # id(method FunctionDef) -> its class
    # torch._dynamo.config flags set to True at module level (they change what breaks)
    dynamo_flags: set[str] = field(default_factory=set)
    # method name -> the methods of that name of the file's torch.distributions subclasses that the
    # file constructs; None until a call asks (callees.dispatched_methods)
    dispatched_methods: dict[str, list[tuple[ast.FunctionDef, ClassInfo]]] | None = None
    # id(Attribute) of a property read in compiled code -> the call of the getter the walk follows
    # (Evaluator._property_read); kept so that the id()s the walk's memos use stay unique
    property_calls: dict[int, ast.Call] = field(default_factory=dict)
    property_names: frozenset[str] | None = None  # the file's property getters' names; None until asked (super_properties)
    # id(FunctionDef) -> its `# type: (...) -> ...` signature (type_comments.py)
    comment_signatures: dict[int, CommentSignature] = field(default_factory=dict)

    # -- name resolution -------------------------------------------------------------------
    def returns(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
        """What `function` is declared to return: its annotation, else its type comment's."""
        if function.returns is not None:
            return function.returns
        signature = self.comment_signatures.get(id(function))
        return signature.returns if signature is not None else None

    def param_annotation(self, function: ast.FunctionDef | ast.AsyncFunctionDef, arg: ast.arg) -> ast.expr | None:
        """A parameter's declared type: its annotation, else the function's type comment's."""
        if arg.annotation is not None:
            return arg.annotation
        signature = self.comment_signatures.get(id(function))
        return signature.params.get(arg.arg) if signature is not None else None

    def qualname(self, node: ast.AST, local_names: dict | set | None = None, local_imports: dict | None = None) -> str | None:
        """The dotted name an expression refers to (`nn.Linear` -> `torch.nn.Linear`), or None.

        Names bound locally (`local_names`) shadow imports and builtins. Builtins resolve to
        `builtins.<name>` unless the module rebinds them.
        """
        if isinstance(node, ast.Name):
            name = node.id
            if local_imports and name in local_imports:
                return local_imports[name]
            if local_names is not None and name in local_names:
                return None
            found = self.imports.get(name)
            if found is not None:
                return found
            if name in self.top_level_names:
                return None
            if name in BUILTIN_NAMES:
                return "builtins." + name
            return None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value, local_names, local_imports)
            return f"{base}.{node.attr}" if base else None
        return None

    def is_script_function(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """`function` is decorated `@torch.jit.script`: called from code that runs eagerly, it runs
        as TorchScript, with no Python frame for dynamo to compile (measured on torch 2.13)."""
        return any(self.qualname(d) in JIT_SCRIPT_FUNCTIONS for d in function.decorator_list)

    def plain_function(self, name: str) -> ast.FunctionDef | None:
        """The module-level `def name` when nothing else at the top level binds `name` and no
        decorator wraps it (whatever a decorator returns may be another object: `lru_cache`'s
        wrapper takes attributes where a function does not, for dynamo)."""
        function = self.functions.get(name)
        if function is None or function.decorator_list or self.tree is None:
            return None
        bindings = 0
        for statement in self.tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bindings += statement.name == name
            elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                bindings += any(bound == name for target in targets for bound in bound_names(target))
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                bindings += any((alias.asname or alias.name.split(".")[0]) == name for alias in statement.names)
        return function if bindings == 1 else None

    def method(self, cls: ClassInfo, name: str, _seen: set[str] | None = None) -> ast.FunctionDef | None:
        """Look `name` up on `cls` and its bases defined in this module (in MRO-ish order)."""
        if name in cls.methods:
            return cls.methods[name]
        seen = _seen if _seen is not None else set()
        seen.add(cls.name)
        for base in cls.local_bases:
            info = self.classes.get(base)
            if info is not None and info.name not in seen:
                found = self.method(info, name, seen)
                if found is not None:
                    return found
        return None

    def in_file_ancestry(self, cls: ClassInfo) -> list[ClassInfo]:
        """`cls` and its bases defined in this module, depth first (MRO-ish, each once)."""
        found: list[ClassInfo] = []
        pending = [cls]
        while pending:
            info = pending.pop(0)
            if any(info is seen for seen in found):
                continue
            found.append(info)
            pending[:0] = [self.classes[base] for base in info.local_bases if base in self.classes]
        return found

    def attr_classes_of(self, cls: ClassInfo, name: str, element: bool = False) -> list[ClassInfo]:
        """The in-file classes `self.<name>` holds (or its elements hold, for module containers)."""
        found = (cls.attr_element_classes if element else cls.attr_classes).get(name)
        if found is None:
            for base in cls.local_bases:
                info = self.classes.get(base)
                if info is not None and info is not cls:
                    result = self.attr_classes_of(info, name, element)
                    if result:
                        return result
            if element or not cls.attr_params.get(name):
                return []
            from .constructions import constructed_attr_holdings  # it reads this index

            found = constructed_attr_holdings(self, cls, name)[0]
        return [self.classes[n] for n in found if n in self.classes]

    def annotated_class(self, annotation: ast.expr | None) -> ClassInfo | None:
        """The class of this file an annotation names, alone or with None (`DecodeCache`,
        `DecodeCache | None`, `Optional[DecodeCache]`, or one of these quoted)."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except (SyntaxError, ValueError, RecursionError):
                return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [annotation.left, annotation.right]
            if any(isinstance(side, ast.Constant) and side.value is None for side in sides):
                return self.annotated_class(next(side for side in sides if not (isinstance(side, ast.Constant) and side.value is None)))
            return None
        if isinstance(annotation, ast.Subscript) and self.qualname(annotation.value) in ("typing.Optional",):
            return self.annotated_class(annotation.slice)
        if isinstance(annotation, ast.Name) and annotation.id not in self.imports:
            return self.classes.get(annotation.id)
        return None

    def attr_functions_of(self, cls: ClassInfo, name: str) -> list[ast.FunctionDef]:
        """The module-level functions of this file `self.<name>` may hold (set in `__init__` of
        the class or of an in-file base)."""
        names = self._inherited(cls, lambda info: info.attr_module_functions, name, set()) or ()
        if not names:
            from .constructions import constructed_attr_holdings  # it reads this index

            holder = next((info for info in self.in_file_ancestry(cls) if info.attr_params.get(name)), None)
            names = constructed_attr_holdings(self, holder, name)[1] if holder is not None else ()
        return [self.functions[n] for n in names if n in self.functions]

    def attr_kind(self, cls: ClassInfo, name: str) -> Kind | None:
        return self._inherited(cls, lambda info: info.attr_kinds, name, set())

    def attr_torch_class(self, cls: ClassInfo, name: str) -> str | None:
        """`self.<name> = nn.LSTM(...)` in the class or an in-file base -> "LSTM"; an optimizer or
        LR scheduler keeps its qualified name (`torch.optim.Adam`, see module_state)."""
        return self._inherited(cls, lambda info: info.attr_torch_classes, name, set())

    def holds_torch_class(self, cls: ClassInfo, layers: frozenset[str]) -> bool:
        """Whether the class or an in-file base sets some `self.<name>` to one of `layers`."""
        seen: set[str] = set()
        pending = [cls]
        while pending:
            info = pending.pop()
            if info.name in seen:
                continue
            seen.add(info.name)
            if any(layer in layers for layer in info.attr_torch_classes.values()):
                return True
            pending += [self.classes[base] for base in info.local_bases if base in self.classes]
        return False

    def subclass_torch_classes(self, cls: ClassInfo, name: str) -> list[tuple[str, str]]:
        """(subclass, "LSTM") for each in-file subclass of `cls` whose `self.<name>` is a torch
        layer: timm's `LSTM2d(RNN2dBase)` sets the `rnn_v` that the base's `forward` calls."""
        found = []
        for info in self.classes.values():
            if info is not cls and self._derives_from(info, cls.name, set()):
                layer = self.attr_torch_class(info, name)
                if layer is not None:
                    found.append((info.name, layer))
        return found

    def _derives_from(self, cls: ClassInfo, base: str, seen: set[str]) -> bool:
        seen.add(cls.name)
        for parent in cls.local_bases:
            info = self.classes.get(parent)
            if parent == base or (info is not None and info.name not in seen and self._derives_from(info, base, seen)):
                return True
        return False

    def _inherited(self, cls: ClassInfo, table, name: str, seen: set[str]):  # type: ignore[no-untyped-def]
        """`table(cls)[name]`, else the first in-file base's (depth first)."""
        found = table(cls)
        if name in found:
            return found[name]
        seen.add(cls.name)
        for base in cls.local_bases:
            info = self.classes.get(base)
            if info is not None and info.name not in seen:
                value = self._inherited(info, table, name, seen)
                if value is not None:
                    return value
        return None


def _import_bindings(stmt: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str]]:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                root = alias.name.split(".")[0]
                yield root, root
    else:
        module = "." * stmt.level + (stmt.module or "")
        for alias in stmt.names:
            if alias.name == "*":
                continue
            prefix = module if module.endswith(".") or not module else module + "."
            yield alias.asname or alias.name, prefix + alias.name


def import_bindings(stmt: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    return list(_import_bindings(stmt))


def decorator_target(decorator: ast.expr) -> ast.expr:
    """`@torch.compile(mode=...)` -> `torch.compile`; `@torch.compile` stays as is."""
    return decorator.func if isinstance(decorator, ast.Call) else decorator


def walk_top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Top-level statements, looking inside `if`/`try`/`with` (guarded imports and definitions)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from walk_top_level(stmt.body)
            yield from walk_top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from walk_top_level(stmt.body)
            for handler in stmt.handlers:
                yield from walk_top_level(handler.body)
            yield from walk_top_level(stmt.orelse)
            yield from walk_top_level(stmt.finalbody)
        elif isinstance(stmt, ast.With):
            yield from walk_top_level(stmt.body)


def build_index(tree: ast.Module, imported_bindings: Mapping[str, str] | None = None) -> ModuleIndex:
    """The module's names. `imported_bindings`: names it imports that another module of its
    package binds to `torch.compiler.disable` or to a query dynamo answers while tracing, with the
    torch function each stands for (found by imported_disables.py, never by running the code)."""
    index = ModuleIndex()
    statements = list(walk_top_level(tree.body))
    flag_targets: list[tuple[ast.Attribute, ast.expr]] = []
    # Names first (imports and definitions), so that later kinds can resolve them.
    for stmt in statements:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for local, target in _import_bindings(stmt):
                index.imports.setdefault(local, target)
                index.top_level_names.add(local)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            index.top_level_names.add(stmt.name)
            if isinstance(stmt, ast.FunctionDef):
                index.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            index.top_level_names.add(stmt.name)
            index.classes[stmt.name] = ClassInfo(stmt.name, stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for assigned in targets:
                for bound in bound_names(assigned):
                    index.top_level_names.add(bound)
                if isinstance(assigned, ast.Attribute) and isinstance(stmt, ast.Assign):
                    flag_targets.append((assigned, stmt.value))
    _bind_disable_aliases(index, statements)
    _bind_query_wrappers(index, statements)
    for imported, qualname in (imported_bindings or {}).items():
        if imported in index.imports:
            index.imports[imported] = qualname
    for flag_target, value in flag_targets:  # after the imports are known
        flag = index.qualname(flag_target)
        if flag is not None and flag.startswith(DYNAMO_CONFIG) and isinstance(value, ast.Constant) and value.value is True:
            index.dynamo_flags.add(flag[len(DYNAMO_CONFIG) :])
    for function in index.functions.values():
        _mark_decorated(index, function)
    for info in index.classes.values():
        _index_class(index, info)
    for info in index.classes.values():
        info.is_module = _is_module(index, info, set())
    return index


def _bind_disable_aliases(index: ModuleIndex, statements: list[ast.stmt]) -> None:
    """A module-level name bound to `torch.compiler.disable` resolves to it, as an import would:
    `disable_compiler = torch.compiler.disable` (in a `try`, with a fallback `def` in the
    `except`), `getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap` (timm).
    Where torch has the function, that is what the name holds, so `@disable_compiler` excludes the
    function from compilation. Other modules importing the name see it through `disable_names`."""
    for stmt in statements:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        if name not in index.imports and _denotes_disable(index, stmt.value):
            index.imports[name] = "torch.compiler.disable"
            index.disable_aliases.add(name)


def _denotes_disable(index: ModuleIndex, value: ast.expr) -> bool:
    if _dotted(index, value) in DISABLE_FUNCTIONS:
        return True
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return _denotes_disable(index, value.values[0])  # `disable or fallback`: the first when it exists
    if isinstance(value, ast.IfExp):
        return _denotes_disable(index, value.body) or _denotes_disable(index, value.orelse)
    return False


def _bind_query_wrappers(index: ModuleIndex, statements: list[ast.stmt]) -> None:
    """A module-level function whose whole body returns a query dynamo answers while tracing
    (guards.py) is that query to its callers, as an import of it would be: kornia's
    `def is_compiling() -> bool: return bool(_torch_is_compiling()) if _torch_is_compiling is not
    None else False`, with `from torch.compiler import is_compiling as _torch_is_compiling` in a
    `try`. The fallback is for a torch without the function; torch 2.13 has it. So
    `if not is_compiling(): KORNIA_CHECK(...)` is dead code under compile, as it would be with
    torch's own spelling. Other modules importing the name see it through `imported_bindings`."""
    bound_once: set[str] | None = None  # a name bound again later holds what the last binding gave

    def once(name: str) -> bool:  # counted only in a module that has a candidate: most have none
        nonlocal bound_once
        if bound_once is None:
            bound_once = _bound_once(statements)
        return name in bound_once

    for stmt in statements:  # `_torch_is_compiling = getattr(torch.compiler, "is_compiling", None) or ...`
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id not in index.imports:
            denoted = _denoted_query(index, stmt.value)
            if denoted is not None and once(stmt.targets[0].id):
                index.imports[stmt.targets[0].id] = denoted
    for stmt in statements:
        if not isinstance(stmt, ast.FunctionDef) or stmt.name in index.imports:
            continue
        if any(index.qualname(d) not in INERT_DECORATORS for d in stmt.decorator_list):
            continue
        arguments = stmt.args
        if arguments.args or arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs or arguments.kwarg:
            continue
        body = [b for b in stmt.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str))]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            query = _query_of(index, body[0].value)
            if query is not None and once(stmt.name):
                index.imports[stmt.name] = query
                index.query_wrappers[stmt.name] = query


def _bound_once(statements: list[ast.stmt]) -> set[str]:
    """The names the module's top level binds exactly once (by def, class, import or assignment)."""
    counts: dict[str, int] = {}
    for stmt in statements:
        names: list[str] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [stmt.name]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [local for local, _ in _import_bindings(stmt)]
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [bound for target in targets for bound in bound_names(target)]
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            names = [n.id for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return {name for name, count in counts.items() if count == 1}


def _denoted_query(index: ModuleIndex, value: ast.expr) -> str | None:
    """The query a module-level name is bound to: the function itself, read through `getattr`,
    or the first of `a or b` (the second is a fallback for a torch without the first)."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return _denoted_query(index, value.values[0])
    name = _dotted(index, value)
    return name if name in TRUE_WHILE_COMPILING or name in FALSE_WHILE_COMPILING else None


def _query_of(index: ModuleIndex, value: ast.expr) -> str | None:
    """The qualname of the query `value` returns: `q()`, `bool(q())`, or `bool(q()) if q is not
    None else False` / `q() if q else False` (a fallback for a torch without `q`)."""
    if isinstance(value, ast.IfExp):
        tested = value.test.left if isinstance(value.test, ast.Compare) and len(value.test.ops) == 1 and isinstance(value.test.ops[0], ast.IsNot) else value.test
        fallback = isinstance(value.orelse, ast.Constant) and isinstance(value.orelse.value, bool)
        query = _query_of(index, value.body) if fallback else None
        return query if query is not None and index.qualname(tested) == query else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "bool" and len(value.args) == 1 and not value.keywords:
        return _query_of(index, value.args[0])
    if isinstance(value, ast.Call) and not value.args and not value.keywords:
        name = index.qualname(value.func)
        if name in TRUE_WHILE_COMPILING or name in FALSE_WHILE_COMPILING:
            return name
    return None


def _dotted(index: ModuleIndex, value: ast.expr) -> str | None:
    """The dotted name, reading `getattr(x, "name", default)` as `x.name`."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "getattr"
        and len(value.args) >= 2
        and isinstance(value.args[1], ast.Constant)
        and isinstance(value.args[1].value, str)
    ):
        base = _dotted(index, value.args[0])
        return f"{base}.{value.args[1].value}" if base else None
    return index.qualname(value)


def bound_names(target: ast.expr) -> Iterator[str]:
    """The names an assignment target binds (`a, (b, *c)` -> a, b, c)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from bound_names(target.value)


def _mark_decorated(index: ModuleIndex, function: ast.FunctionDef) -> None:
    for decorator in function.decorator_list:
        target = decorator_target(decorator)
        name = index.qualname(target)
        if name in DISABLE_FUNCTIONS:
            index.disabled.add(id(function))
            if isinstance(decorator, ast.Call) and any(
                k.arg == "recursive" and isinstance(k.value, ast.Constant) and k.value.value is False for k in decorator.keywords
            ):
                index.frame_only.append(function)
        elif name in OPAQUE_DECORATORS or (isinstance(target, ast.Name) and target.id == ORDERED_HELPER and target.id in index.functions):
            index.opaque.add(id(function))


def _index_class(index: ModuleIndex, info: ClassInfo) -> None:
    for base in info.node.bases:
        name = index.qualname(base)
        info.base_names.append(name)
        if isinstance(base, ast.Name) and base.id in index.classes and base.id not in index.imports:
            info.local_bases.append(base.id)
        if name in AUTOGRAD_FUNCTION_BASES:
            info.is_autograd_function = True
    for stmt in info.node.body:
        if isinstance(stmt, ast.FunctionDef):
            info.methods[stmt.name] = stmt
            index.owner[id(stmt)] = info
            _mark_decorated(index, stmt)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            kind = annotation_kind(stmt.annotation, index)
            if kind is not Kind.UNKNOWN:
                info.attr_kinds[stmt.target.id] = kind


def _is_module(index: ModuleIndex, info: ClassInfo, seen: set[str]) -> bool:
    """Whether instances of the class are nn.Modules.

    Certain when a base is a torch.nn class or an in-file module class. When a base comes from
    another file (a `PreTrainedModel`, a project base class), directly or through in-file classes,
    one file cannot tell; a class on such a base that has a `forward` (its own or inherited from an
    in-file base) is taken to be a module, as it almost always is.
    """
    status = _module_status(index, info, seen)
    if status != "maybe":
        return status == "yes"
    forward = index.method(info, "forward")
    return forward is not None and not any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in forward.decorator_list
    )


def plain_class(index: ModuleIndex, info: ClassInfo) -> bool:
    """Whether the class is certainly not an nn.Module, nor on any base from another file (a
    framework's Dataset, Optimizer or processor class, whose methods the framework calls)."""
    return _module_status(index, info, set()) == "no"


def _module_status(index: ModuleIndex, info: ClassInfo, seen: set[str]) -> str:
    """"yes" (an nn.Module for sure), "no", or "maybe" (a base from another file)."""
    if info.is_autograd_function or info.name in seen:
        return "no"
    seen.add(info.name)
    maybe = False
    for base_node, name in zip(info.node.bases, info.base_names):
        if name is not None and name.startswith("torch.nn.") and not name.startswith("torch.nn.functional"):
            return "yes"
        if name in AUTOGRAD_FUNCTION_BASES:
            return "no"
        if isinstance(base_node, ast.Name) and base_node.id in index.classes and base_node.id not in index.imports:
            status = _module_status(index, index.classes[base_node.id], seen)
            if status == "yes":
                return "yes"
            maybe = maybe or status == "maybe"
        elif name is None or not name.startswith("builtins."):
            maybe = True
    return "maybe" if maybe else "no"


# -- annotations ----------------------------------------------------------------------------
_TENSOR_ANNOTATIONS = frozenset(
    {
        "torch.Tensor",
        "torch.FloatTensor",
        "torch.LongTensor",
        "torch.IntTensor",
        "torch.DoubleTensor",
        "torch.HalfTensor",
        "torch.BFloat16Tensor",
        "torch.ByteTensor",
        "torch.nn.Parameter",
        "torch.nn.parameter.Parameter",
        # the factory function written for the class (Coqui TTS's `rand_segments(x: torch.tensor,
        # x_lengths: torch.tensor = None, ...)`): as an annotation it can only mean a tensor
        "torch.tensor",
    }
)
_BOOL_TENSOR_ANNOTATIONS = frozenset({"torch.BoolTensor"})
_PY_ANNOTATIONS = frozenset(
    {"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes", "torch.Size",
     "torch.dtype", "torch.device"}
)
_SEQUENCE_ANNOTATIONS = frozenset(
    {"builtins.tuple", "builtins.list", "typing.Tuple", "typing.List", "typing.Sequence",
     "collections.abc.Sequence", "typing.Iterable"}
)
_MAPPING_ANNOTATIONS = frozenset(
    {"builtins.dict", "typing.Dict", "typing.Mapping", "collections.abc.Mapping", "typing.MutableMapping", "collections.OrderedDict"}
)
_OPTIONAL_ANNOTATIONS = frozenset({"typing.Optional"})
_UNION_ANNOTATIONS = frozenset({"typing.Union"})


def mapping_item_annotations(node: ast.expr | None, index: ModuleIndex) -> tuple[ast.expr, ast.expr] | None:
    """The key and value annotations of a mapping annotation (`dict[int, torch.Generator]`)."""
    if not (isinstance(node, ast.Subscript) and index.qualname(node.value) in _MAPPING_ANNOTATIONS):
        return None
    inner = node.slice
    return (inner.elts[0], inner.elts[1]) if isinstance(inner, ast.Tuple) and len(inner.elts) == 2 else None


def names_container(node: ast.expr, index: ModuleIndex) -> bool:
    """Whether an annotation names a dict, list, tuple or other container (`structure: dict`),
    which a tensor never is, whatever the assigned call is guessed to return."""
    outer = index.qualname(node.value if isinstance(node, ast.Subscript) else node)
    return outer in _MAPPING_ANNOTATIONS or outer in _SEQUENCE_ANNOTATIONS


def annotation_kind(node: ast.expr | None, index: ModuleIndex) -> Kind:
    """The kind an annotation promises: `Optional[torch.Tensor]` -> TENSOR, `bool` -> PY."""
    if node is None:
        return Kind.UNKNOWN
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return Kind.UNKNOWN
        return annotation_kind(parsed, index)
    if isinstance(node, ast.Constant) and node.value is None:
        return Kind.NONE
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(annotation_kind(node.left, index), annotation_kind(node.right, index))
    if isinstance(node, ast.Subscript):
        outer = index.qualname(node.value)
        inner = node.slice
        if outer in _OPTIONAL_ANNOTATIONS:
            return _union(annotation_kind(inner, index), Kind.NONE)
        if outer in _UNION_ANNOTATIONS and isinstance(inner, ast.Tuple):
            result = Kind.NONE if not inner.elts else annotation_kind(inner.elts[0], index)
            for element in inner.elts[1:]:
                result = _union(result, annotation_kind(element, index))
            return result
        if outer in _SEQUENCE_ANNOTATIONS:
            elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            kinds = {annotation_kind(e, index) for e in elements if not (isinstance(e, ast.Constant) and e.value is Ellipsis)}
            if kinds and kinds <= {Kind.TENSOR, Kind.BOOL}:
                return Kind.TENSORS
            if kinds and kinds <= {Kind.PY}:
                return Kind.PY_SEQ
        return Kind.UNKNOWN
    name = index.qualname(node)
    if name in _TENSOR_ANNOTATIONS:
        return Kind.TENSOR
    if name in _BOOL_TENSOR_ANNOTATIONS:
        return Kind.BOOL
    if name in _PY_ANNOTATIONS:
        return Kind.PY
    if name == "torch.Generator":
        return Kind.GENERATOR  # `Optional[torch.Generator]` stays unknown: None, the usual value, traces
    if name in ("logging.Logger", "logging.LoggerAdapter"):
        return Kind.LOGGER  # its methods break as a module-level logger's do (torchtune's `log_rank_zero(logger, ...)`)
    return Kind.UNKNOWN


def _union(a: Kind, b: Kind) -> Kind:
    if a is b:
        return a
    if Kind.NONE in (a, b):
        other = b if a is Kind.NONE else a
        if other in (Kind.TENSOR, Kind.BOOL, Kind.PY, Kind.TENSORS):
            return other
    return Kind.UNKNOWN
