"""Kinds of the state compiled code reads but does not create: module globals and the attributes a
module's `__init__` sets up (`self.proj = nn.Linear(...)` makes `self.proj(x)` a tensor,
`self.log = logging.getLogger(...)` makes `self.log.info(...)` a Logger call).

Run once per analysis, after `symbols.build_index`, with the same evaluator the walker uses, so a
fact about torch's API is written down in exactly one place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..astwalk import walk
from .kinds import Kind
from .symbols import OPTIM_PREFIX, ClassInfo, ModuleIndex, walk_top_level
from .tensors import Evaluator

_REGISTER_TENSOR = frozenset({"register_buffer", "register_parameter"})


def complete_index(index: ModuleIndex, tree: ast.Module, source: str = "") -> None:
    _global_kinds(index, tree)
    index.tree = tree
    index.source = source
    for info in index.classes.values():
        init = info.methods.get("__init__")
        if init is not None:
            _init_attributes(index, info, init)
            _lazily_built_attributes(index, info)


def _lazily_built_attributes(index: ModuleIndex, info: ClassInfo) -> None:
    """`self.distance_module = None` in `__init__`, `self.distance_module = Distance(...)` in the
    method that first needs it (GPyTorch's kernels cache their Distance so): the attribute holds
    an instance of that class of the file wherever it is not None, so its methods are what a call
    through it runs. Only where every other store of it, in any method, constructs such a class."""
    lazy = {attr for attr, kind in info.attr_kinds.items() if kind is Kind.NONE and attr not in info.attr_classes}
    if not lazy:
        return
    built: dict[str, set[str]] = {}
    for method in info.methods.values():
        positional = method.args.posonlyargs + method.args.args
        if method.name == "__init__" or not positional:
            continue
        self_name = positional[0].arg
        for node in walk(method):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
                return
            if not (isinstance(node, ast.Attribute) and node.attr in lazy and isinstance(node.ctx, (ast.Store, ast.Del))):
                continue
            constructed = _constructed_by(index, method, node, self_name)
            if constructed is None:
                lazy.discard(node.attr)
            else:
                built.setdefault(node.attr, set()).add(constructed)
    for attr in lazy & built.keys():
        info.attr_classes[attr] = tuple(sorted(built[attr]))


def _constructed_by(index: ModuleIndex, method: ast.FunctionDef, target: ast.Attribute, self_name: str) -> str | None:
    """The class of the file that `self.<attr> = Cls(...)` constructs, for a store `target` of that
    form in `method`; None for any other store (another object's attribute, another value)."""
    if not (isinstance(target.value, ast.Name) and target.value.id == self_name and isinstance(target.ctx, ast.Store)):
        return None
    for node in walk(method):
        if isinstance(node, ast.Assign) and target in node.targets:
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in index.classes:
                return value.func.id
            return None
    return None


def _global_kinds(index: ModuleIndex, tree: ast.Module) -> None:
    evaluator = Evaluator(index)
    instances: dict[str, str | None] = {}  # None: bound more than once, or to something else too
    optim_objects: dict[str, str | None] = {}  # the same, for torch.optim constructions
    registries: dict[str, tuple[str, ...] | None] = {}  # the same, for displays of classes
    for stmt in walk_top_level(tree.body):
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]:
            if isinstance(target, ast.Name):
                value = getattr(stmt, "value", None)
                cls = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None
                known = cls if cls in index.classes and target.id not in instances else None
                instances[target.id] = known
                built = index.qualname(value.func) if isinstance(value, ast.Call) else None
                optim_objects[target.id] = built if built is not None and built.startswith(OPTIM_PREFIX) and target.id not in optim_objects else None
                listed = _listed_classes(index, value)
                registries[target.id] = listed if listed and target.id not in registries else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        if name in index.imports:
            continue
        kind = evaluator.visit(value)
        if kind is not Kind.UNKNOWN:
            index.global_kinds[name] = kind
    index.global_instances = {name: cls for name, cls in instances.items() if cls is not None}
    index.global_optim_objects = {name: built for name, built in optim_objects.items() if built is not None}
    index.class_registries = {name: classes for name, classes in registries.items() if classes is not None}


def _listed_classes(index: ModuleIndex, value: ast.expr | None) -> tuple[str, ...] | None:
    """The in-file classes a dict, list or tuple display names as its values, where it holds
    nothing else (`{'bosh3': Bosh3Solver, 'dopri5': Dopri5Solver}`); None otherwise."""
    elements = _display_values(value)
    if not elements or not all(isinstance(e, ast.Name) and e.id in index.classes for e in elements):
        return None
    return tuple(dict.fromkeys(e.id for e in elements if isinstance(e, ast.Name)))


def _display_values(value: ast.expr | None) -> list[ast.expr]:
    """The values of a dict display (none if it unpacks `**other`), or the elements of a list or
    tuple display; none for anything else."""
    if isinstance(value, ast.Dict):
        return value.values if all(key is not None for key in value.keys) else []
    if isinstance(value, (ast.List, ast.Tuple)):
        return value.elts
    return []


def instance_container(index: ModuleIndex, name: str) -> tuple[tuple[str, ...], bool] | None:
    """What `name` holds if it is bound once in the file to a display of in-file class instances
    (see ModuleIndex.instance_containers): the classes, and whether iterating it gives them. A
    name bound anywhere else, to anything, is left out: the file-wide view stands in for scopes,
    so it must not guess between two bindings. The file is walked once, on the first name whose
    assignment to a display its text shows (most files never are: a walk costs as much as a
    tenth of the analysis)."""
    if index.instance_containers is None:
        assigned = re.compile(rf"(?m)^\s*{re.escape(name)}\s*(?::[^=\n]*)?=\s*[\[({{]")
        if index.tree is None or not index.classes or (index.source and not assigned.search(index.source)):
            return None
        index.instance_containers = _instance_containers(index, index.tree)
    return index.instance_containers.get(name)


def _instance_containers(index: ModuleIndex, tree: ast.Module) -> dict[str, tuple[tuple[str, ...], bool]]:
    found: dict[str, tuple[tuple[str, ...], bool] | None] = {}
    for node in walk(tree):
        for name in _other_bindings(node):
            found[name] = None
        for target, value in _bindings(node):
            for name in (n.id for n in walk(target) if isinstance(n, ast.Name)):
                held = constructed_classes(index, value) if isinstance(target, ast.Name) and name not in found else None
                found[name] = (held, not isinstance(value, ast.Dict)) if held else None
    return {name: held for name, held in found.items() if held}


def _other_bindings(node: ast.AST) -> Iterator[str]:
    """Names bound otherwise than by assignment: parameters, imports, `def` and `class` names,
    `except ... as`, `match` captures, `global`/`nonlocal` declarations."""
    if isinstance(node, ast.arguments):
        for arg in [*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg]:
            if arg is not None:
                yield arg.arg
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
        isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name
    ):
        yield node.name  # type: ignore[misc]
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names


def _bindings(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    """The targets a statement or expression binds, each with the value it binds when one
    expression gives it whole (None for loops, `with`, augmented assignments)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield target, node.value
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
        yield node.target, node.value
    elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
        yield node.target, None
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                yield item.optional_vars, None


def constructed_classes(index: ModuleIndex, value: ast.expr | None) -> tuple[str, ...] | None:
    """The in-file classes a dict, list or tuple display constructs, where it only holds
    constructions of them (`{"a": Head(2), "b": Head(3)}`); None otherwise."""
    names: list[str] = []
    for element in _display_values(value):
        if not (isinstance(element, ast.Call) and isinstance(element.func, ast.Name) and element.func.id in index.classes):
            return None
        if element.func.id not in names:
            names.append(element.func.id)
    return tuple(names) or None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _statements(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)


def _imported_class_call(index: ModuleIndex, func: ast.expr) -> bool:
    """`BoxCoder(...)` or `det_utils.BoxCoder(...)` with the root imported (not from torch): by
    the convention that classes are capitalised, a class of another module being instantiated."""
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not isinstance(root, ast.Name) or root.id not in index.imports or not leaf[:1].isupper():
        return False
    return not index.imports[root.id].startswith("torch")


def _init_attributes(index: ModuleIndex, info: ClassInfo, init: ast.FunctionDef) -> None:
    positional = init.args.posonlyargs + init.args.args
    if not positional:
        return
    self_name = positional[0].arg
    evaluator = Evaluator(index, cls=info, self_name=self_name)
    parameters = {a.arg for a in (*positional[1:], *init.args.kwonlyargs)}
    stored: set[str] | None = None

    def unchanged_parameter(name: str) -> bool:  # a parameter __init__ never rebinds: `self.low = low` holds what the caller passed
        nonlocal stored
        if name not in parameters:
            return False
        if stored is None:
            stored = {n.id for n in walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return name not in stored
    local_functions = {stmt.name: stmt for stmt in _statements(init.body) if isinstance(stmt, ast.FunctionDef)}
    init_names: set[str] | None = None  # names `__init__` binds itself (parameters, locals): not the module's function of that name

    def bound_in_init(name: str) -> bool:  # asked rarely: a walk of every `__init__` was 4% of `check`
        nonlocal init_names
        if init_names is None:
            init_names = {a.arg for a in walk(init.args) if isinstance(a, ast.arg)}
            init_names |= {n.id for n in walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return name in init_names

    for stmt in _statements(init.body):
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            _registration(info, stmt.value, self_name)
            continue
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
                if isinstance(value, ast.Lambda):
                    info.attr_plain_functions[target.attr] = value
                elif isinstance(value, ast.Name) and value.id in local_functions:
                    info.attr_plain_functions[target.attr] = local_functions[value.id]
                elif isinstance(value, ast.Name) and value.id in index.functions and not bound_in_init(value.id):
                    chosen = info.attr_module_functions.get(target.attr, ())
                    if value.id not in chosen:
                        info.attr_module_functions[target.attr] = chosen + (value.id,)
                kind = evaluator.visit(value)
                previous = info.attr_kinds.get(target.attr)
                info.attr_kinds[target.attr] = kind if previous in (None, kind) else Kind.UNKNOWN
                if isinstance(value, ast.Name) and kind is Kind.UNKNOWN and unchanged_parameter(value.id):
                    held = info.attr_params.get(target.attr)
                    info.attr_params[target.attr] = value.id if held in (None, value.id) else ""
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in index.classes:
                    known = info.attr_classes.get(target.attr, ())
                    if value.func.id not in known:
                        info.attr_classes[target.attr] = known + (value.func.id,)
                elif isinstance(value, ast.Call) and _imported_class_call(index, value.func):
                    written = ast.unparse(value.func)
                    # two different classes for one attribute: neither is known to be the one called
                    held = info.attr_imported_classes.get(target.attr)
                    info.attr_imported_classes[target.attr] = written if held in (None, written) else ""
                if isinstance(value, ast.Call):
                    torch_name = index.qualname(value.func)
                    if torch_name is not None and torch_name.startswith(OPTIM_PREFIX):
                        info.attr_torch_classes[target.attr] = torch_name  # an optimizer or LR scheduler (GM533)
                    elif torch_name is not None and torch_name.startswith("torch.nn.") and torch_name.count(".") == 2:
                        info.attr_torch_classes[target.attr] = torch_name.rsplit(".", 1)[1]
                        if _preserves_shape(torch_name.rsplit(".", 1)[1], value):
                            info.attr_shape_preserving.add(target.attr)
                        else:
                            info.attr_shape_preserving.discard(target.attr)
                for element in _container_element_classes(index, value):
                    _add_element_class(info, target.attr, element)


# torch.nn layers whose output has the shape of their (first) input.
_SHAPE_PRESERVING_LAYERS = frozenset(
    {
        "LayerNorm", "GroupNorm", "RMSNorm", "Identity", "Dropout", "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh",
        "Sigmoid", "Softmax", "LogSoftmax", "Softplus", "ELU", "LeakyReLU", "Hardswish", "Hardsigmoid", "Softsign",
        "Tanhshrink",
    }
)


def _preserves_shape(torch_class: str, call: ast.Call) -> bool:
    """Whether `self.<attr>(x)` has the shape of `x`: shape-preserving layers, and a square
    `nn.Linear(d, d)` (the same expression for in and out features)."""
    if torch_class in _SHAPE_PRESERVING_LAYERS:
        return True
    if torch_class != "Linear":
        return False
    sizes = list(call.args[:2]) + [k.value for k in call.keywords if k.arg in ("in_features", "out_features")]
    return len(sizes) == 2 and ast.dump(sizes[0]) == ast.dump(sizes[1])


def _add_element_class(info: ClassInfo, attr: str, name: str) -> None:
    known = info.attr_element_classes.get(attr, ())
    if name not in known:
        info.attr_element_classes[attr] = known + (name,)


def _registration(info: ClassInfo, call: ast.Call, self_name: str) -> None:
    """`self.register_buffer("name", tensor)` creates the attribute `self.name`;
    `self.layers.append(Layer(...))` fills a ModuleList with `Layer`s."""
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ("append", "extend")
        and isinstance(func.value, ast.Attribute)
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == self_name
        and call.args
    ):
        element = call.args[0]
        if func.attr == "extend" and isinstance(element, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)):
            element = element.elts[0] if isinstance(element, (ast.List, ast.Tuple)) and element.elts else getattr(element, "elt", element)
        if isinstance(element, ast.Call) and isinstance(element.func, ast.Name):
            _add_element_class(info, func.value.attr, element.func.id)
        return
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _REGISTER_TENSOR
        and isinstance(func.value, ast.Name)
        and func.value.id == self_name
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        info.attr_kinds[call.args[0].value] = Kind.TENSOR


def _container_element_classes(index: ModuleIndex, value: ast.expr) -> list[str]:
    """The in-file classes of the instances a container holds: `nn.ModuleList([Layer(c) for _ in
    range(n)])` (or a generator, or a list), `nn.ModuleDict({"a": Head()})`, and plain lists,
    tuples and dicts of instances (`{2: Processor(2), 3: Processor(3)}`, a dict comprehension),
    whose elements a call like `self.by_size[k](x)` runs."""
    if isinstance(value, ast.Call) and value.args:
        name = index.qualname(value.func)
        if name not in ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.modules.container.ModuleList", "torch.nn.ModuleDict"):
            return []
        return _element_classes(index, value.args[0])
    return _element_classes(index, value)


def _element_classes(index: ModuleIndex, container: ast.expr) -> list[str]:
    if isinstance(container, (ast.ListComp, ast.GeneratorExp)):
        elements = [container.elt]
    elif isinstance(container, ast.DictComp):
        elements = [container.value]
    elif isinstance(container, (ast.List, ast.Tuple)):
        elements = list(container.elts)
    elif isinstance(container, ast.Dict):
        elements = [v for v in container.values if v is not None]
    else:
        return []
    names = []
    for element in elements:
        if isinstance(element, ast.Call) and isinstance(element.func, ast.Name) and element.func.id in index.classes:
            if element.func.id not in names:
                names.append(element.func.id)
    return names
