"""Which same-file functions a call in compiled code runs, so the analysis can walk them next.

A call runs a function of the file (`helper(x)`), a method (`self.norm(x)`, `super().forward(x)`,
`Cls.make(x)`), or a module instance's `forward` (`self.mlp(x)`, `layer(x)` for a local bound to a
layer, `self.layers[i](x)`): the walker follows each with the caller's argument kinds. Locals bound
to instances of in-file classes are remembered as the function is walked (`bind_instances`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from ..astwalk import child_nodes, walk
from .kinds import Kind
from .module_state import constructed_classes, instance_container
from .super_properties import calls_super
from .symbols import ClassInfo, ModuleIndex
from .tensors import Evaluator, own_nodes

# Library classes whose in-file subclasses the library's own code calls back into (library_dispatched).
LIBRARY_DISPATCH_ROOT = "torch.distributions."

# A function a call may run, the class it is defined in, and whether it is bound (`self` is passed).
Callee = tuple[ast.FunctionDef, ClassInfo | None, bool]


class CalleeResolver:
    """Resolves calls for one walked function; owned by its walker, reading its evaluator."""

    def __init__(
        self,
        evaluator: Evaluator,
        function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None = None,
        text: Callable[[], str] | None = None,
    ) -> None:
        self._text = text  # the function's source, for a quick test before the walk of function_aliases
        self.evaluator = evaluator
        self.instance_classes: dict[str, tuple[str, ...]] = {}  # local -> in-file classes it may hold
        # locals bound to an object this function constructs (`solver = SOLVERS[method](...)`):
        # dynamo has no source for such an object (see built_here)
        self.built_locals: set[str] = set()
        # attributes of `self` this function binds to an object it constructs, with the classes:
        # GPyTorch's `self.distance_module = Distance(...)` (see built_here)
        self.built_attrs: dict[str, tuple[str, ...]] = {}
        # local display of instances -> their classes, and whether iterating it gives them (not a dict)
        self.container_classes: dict[str, tuple[tuple[str, ...], bool]] = {}
        self.function = function
        self._function_aliases: dict[str, tuple[str, ...]] | None = None

    def callees(self, call: ast.Call) -> list[Callee]:
        """The same-file functions a call may run (several for a ModuleList of mixed layers)."""
        func = call.func
        index = self.evaluator.index
        if isinstance(func, ast.Name) and func.id in self.instance_classes:
            return self._forwards_of(self.instance_classes[func.id])  # layer(x)
        constructed = self._constructed_class(func)
        if constructed is not None:
            return self._forwards_of((constructed.name,))  # DiceHelper(...)(y_pred, y)
        if isinstance(func, ast.Subscript):
            held_in = self._element_classes(func, iterating=False)
            if held_in:
                return self._forwards_of(held_in)  # metrics[which](pred, gold)
        if (
            isinstance(func, ast.Subscript)
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.value.value.id == self.evaluator.self_name
            and self.evaluator.cls is not None
        ):
            held = index.attr_classes_of(self.evaluator.cls, func.value.attr, element=True)
            return self._forwards_of(tuple(info.name for info in held))  # self.layers[i](x)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == self.evaluator.self_name
            and self.evaluator.cls is not None
            and index.method(self.evaluator.cls, func.attr) is None
        ):
            held = index.attr_classes_of(self.evaluator.cls, func.attr)
            if held:
                return self._forwards_of(tuple(info.name for info in held))  # self.mlp(x)
            functions = index.attr_functions_of(self.evaluator.cls, func.attr)
            if functions:
                return [(function, None, False) for function in functions]  # self.cls_criterion(x, y)
        if isinstance(func, ast.Attribute):
            owners = self._instance_classes(func.value)
            if owners:
                found: list[Callee] = []
                for owner in owners:
                    method = index.method(owner, func.attr)
                    if method is not None:
                        # walked as the instance's class, so that the `self.<method>(...)` calls of
                        # an inherited method reach the subclass's overrides (torchdiffeq's base
                        # `integrate` calls `self._advance`, which only its RK subclass defines)
                        found.append((method, owner, not _is_staticmethod(method)))
                return found
        if isinstance(func, ast.Name) and func.id in self.evaluator.env and func.id not in self.evaluator.local_imports:
            chosen = self.function_aliases().get(func.id, ())
            if len(chosen) > 1:
                return [(self.evaluator.index.functions[name], None, False) for name in chosen]  # spline_fn(...)
        single = self._callee(call)
        return [single] if single is not None else []

    def function_aliases(self) -> dict[str, tuple[str, ...]]:
        """Locals every binding of which is a module-level function of the file, or a choice of
        two (`spline_fn = rational_quadratic_spline` in one branch and
        `spline_fn = unconstrained_rational_quadratic_spline` in the other, nflows' spline CDF;
        `fn = a if flag else b`): calling the local runs one of them. A parameter, a loop target
        or any other binding (`with ... as`, `del`, an augmented assignment) rules the local out."""
        if self._function_aliases is None:
            functions = self.evaluator.index.functions
            # most functions assign no module-level function to a name: say so from the text, without a walk
            assigned = set(_ASSIGNED_NAME.findall(self._text())) if self._text is not None else set(functions)
            wanted = any(name in functions for name in assigned)
            self._function_aliases = _function_aliases(self.function, functions) if wanted and self.function is not None else {}
        return self._function_aliases

    def _callee(self, call: ast.Call) -> Callee | None:
        func = call.func
        index = self.evaluator.index
        if isinstance(func, ast.Name):
            if func.id in self.evaluator.local_imports:
                return None
            if func.id in self.evaluator.env:
                chosen = self.function_aliases().get(func.id, ())
                return (index.functions[chosen[0]], None, False) if len(chosen) == 1 else None
            function = index.functions.get(func.id)
            if function is not None:
                return function, None, False
            info = index.classes.get(func.id)
            if info is not None:  # constructing it runs __init__ (for modules: see GM517)
                init = index.method(info, "__init__")
                if init is not None:
                    return init, index.owner.get(id(init)), True
            return None
        if not isinstance(func, ast.Attribute):
            return None
        value = func.value
        if isinstance(value, ast.Name) and value.id == self.evaluator.self_name and self.evaluator.cls is not None:
            method = index.method(self.evaluator.cls, func.attr)
            if method is not None:
                return method, index.owner.get(id(method)), not _is_staticmethod(method)
            return None  # submodule calls (possibly several classes) are handled by callees()
        if calls_super(value) and self.evaluator.cls is not None:
            # the lookup starts after the class that defines the method, which may be a base of
            # the instance's class the method is walked as
            defining = index.owner.get(id(self.function)) if self.function is not None else None
            for base in (defining or self.evaluator.cls).local_bases:
                info = index.classes.get(base)
                method = index.method(info, func.attr) if info is not None else None
                if method is not None:
                    return method, index.owner.get(id(method)), True
            return None
        if isinstance(value, ast.Name) and value.id in index.classes and value.id not in self.evaluator.env:
            info = index.classes[value.id]
            if func.attr == "apply" and info.is_autograd_function:
                # `SpecialSpmm.apply(indices, values, shape, b)` (pyGAT): dynamo traces `forward`
                # with the call's arguments after `ctx` (none with a `setup_context`)
                forward = index.method(info, "forward")
                if forward is None:
                    return None
                return forward, index.owner.get(id(forward)), index.method(info, "setup_context") is None
            method = index.method(info, func.attr)
            if method is not None:
                bound = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in method.decorator_list)
                return method, index.owner.get(id(method)), bound
        return None

    def library_dispatched(self, call: ast.Call) -> list[tuple[ast.FunctionDef, ClassInfo]]:
        """The methods of an in-file subclass of a torch.distributions class that `call`
        constructs: torch's own code calls them (`Independent(OneHotDist(...), 1).sample()` runs
        `OneHotDist.sample`, `.mode` its `mode`), and dynamo traces that code, so they run as
        compiled code though no call of the file names them. Dunder methods are left to their
        own calls."""
        constructed = self._constructed_class(call)
        if constructed is None:
            return []
        return list(_library_methods(self.evaluator.index, constructed).values())

    def dispatched_methods(self, call: ast.Call) -> list[tuple[ast.FunctionDef, ClassInfo]]:
        """For `dist.sample()` on an object of no known class: the `sample` methods of the file's
        torch.distributions subclasses that the file constructs. Such an object, wrapped by torch's
        code (`Independent(OneHotDist(...), 1)`), is one the compiled code built: where the method
        breaks, dynamo cannot resume the caller after the call (GM528)."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr.startswith("__") or calls_super(func.value):
            return []
        index = self.evaluator.index
        if index.dispatched_methods is None:
            index.dispatched_methods = {}
            for info in index.classes.values() if _mentions_library(index) else ():
                if re.search(rf"\b{re.escape(info.name)}\(", index.source):
                    for name, found in _library_methods(index, info).items():
                        index.dispatched_methods.setdefault(name, []).append(found)
        return index.dispatched_methods.get(func.attr, [])

    def _forwards_of(self, names: tuple[str, ...]) -> list[Callee]:
        """Calling a module instance runs its forward (with the caller's argument kinds); calling
        an instance of another class runs its `__call__`."""
        found: list[Callee] = []
        for name in names:
            info = self.evaluator.index.classes.get(name)
            if info is None:
                continue
            forward = self.evaluator.index.method(info, "forward" if info.is_module else "__call__")
            if forward is not None:
                # walked as the instance's class, as methods called on an instance are (callees):
                # kornia's base `forward` calls `self.apply_func`, which only a subclass defines
                found.append((forward, info, True))
        return found

    def _constructed_class(self, value: ast.expr) -> ClassInfo | None:
        """The in-file class `value` constructs (`Helper(flag=True)`), unless its name is shadowed."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id not in self.evaluator.env:
            return self.evaluator.index.classes.get(value.func.id)
        return None

    def _instance_classes(self, value: ast.expr) -> list[ClassInfo]:
        """The in-file classes of `self.encoder`, of a local bound to one (`layer` in a loop), or of
        an instance constructed in place (`Helper(flag=True).channel(y)`)."""
        constructed = self._constructed_class(value)
        if constructed is not None:
            return [constructed]
        if isinstance(value, ast.Name):
            index = self.evaluator.index
            held = self.evaluator.instance_classes_of(value)
            if held:  # `module` of a hook the class registers on itself
                return held
            names = self.instance_classes.get(value.id, ())
            if not names and value.id not in self.evaluator.env and value.id in index.global_instances:
                names = (index.global_instances[value.id],)  # `SPEC.is_in(x)`, SPEC bound at module level
            return [index.classes[n] for n in names if n in index.classes]
        if (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == self.evaluator.self_name
            and self.evaluator.cls is not None
        ):
            return self.evaluator.index.attr_classes_of(self.evaluator.cls, value.attr)
        # `module.spec` in a hook the module registers on itself; `self.attn.kv_cache`
        return self.evaluator.held_classes(value)

    def built_here(self, call: ast.Call) -> bool:
        """`call` is a method call on an object that this function constructs: a local bound to
        `Cls(...)` or `REGISTRY[key](...)`, the construction itself (`Cls(...).run(x)`) of a plain
        class, or an attribute of `self` bound to an nn.Module built here where `__init__` leaves it
        None (GPyTorch's `self.distance_module = Distance(...)` under `if not
        self.distance_module:`, then `self.distance_module._sq_dist(...)`).
        Measured on torch 2.13 where the method breaks: a local holding a plain object or a
        module, and a module stored on `self`, leave dynamo unable to resume the caller ("cannot
        resume", the rest of it eager); a module constructed in place, or a plain object stored on
        `self`, make it skip the caller outright instead, which GM528 does not describe."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return False
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id in self.built_locals:
            return bool(self._infos(self.instance_classes.get(receiver.id, ())))
        if isinstance(receiver, ast.Attribute) and self._is_self(receiver.value) and receiver.attr in self.built_attrs and self._lazily_built(receiver.attr):
            classes = self._infos(self.built_attrs[receiver.attr])
            return bool(classes) and all(info.is_module for info in classes)
        if isinstance(receiver, ast.Call):
            constructed = self._constructed_class(receiver)
            classes = [constructed] if constructed is not None else self._infos(self._registry_of(receiver.func) or ())
            return bool(classes) and not any(info.is_module for info in classes)
        return False

    def _lazily_built(self, attr: str) -> bool:
        """Whether `__init__` sets `self.<attr>` to None: the first call then builds it (under
        `if not self.distance_module:`), and so the compiled code does; an attribute `__init__`
        builds already holds an object dynamo reads through `self` (the test is then false)."""
        cls = self.evaluator.cls
        return cls is not None and cls.attr_kinds.get(attr) is Kind.NONE

    def _is_self(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == self.evaluator.self_name

    def _bind_built_attr(self, target: ast.Attribute, value: ast.expr) -> None:
        """Remember `self.<attr> = Cls(...)` (or a registry's construction) as built here; any
        other binding of the attribute forgets it."""
        constructed = self._constructed_class(value)
        classes = (constructed.name,) if constructed is not None else self._registry_of(value.func) if isinstance(value, ast.Call) else None
        if classes:
            self.built_attrs[target.attr] = classes
        else:
            self.built_attrs.pop(target.attr, None)

    def _registry_of(self, func: ast.expr) -> tuple[str, ...] | None:
        """`SOLVERS[method]` where `SOLVERS` is a module-level registry of in-file classes
        (ModuleIndex.class_registries) that the walked function does not rebind: the classes."""
        if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)) or func.value.id in self.evaluator.env:
            return None
        return self.evaluator.index.class_registries.get(func.value.id)

    def bind_instances(self, target: ast.expr, value: ast.expr, iterating: bool) -> None:
        """Remember which locals hold instances of in-file classes (for method calls on them)."""
        if isinstance(target, (ast.Tuple, ast.List)) and iterating and isinstance(value, ast.Call):
            name = self.evaluator.qualname(value.func)
            if name == "builtins.enumerate" and value.args and len(target.elts) == 2:
                self.bind_instances(target.elts[1], value.args[0], True)
            elif isinstance(value.func, ast.Attribute) and value.func.attr == "items" and not value.args and len(target.elts) == 2:
                holder = value.func.value
                held = self._held_in(holder.id, bare=False) if isinstance(holder, ast.Name) else ()
                if isinstance(target.elts[1], ast.Name) and held:
                    self.instance_classes[target.elts[1].id] = held  # for name, head in heads.items()
            return
        if isinstance(target, ast.Attribute) and self._is_self(target.value) and not iterating:
            self._bind_built_attr(target, value)
            return
        if not isinstance(target, ast.Name):
            return
        found: list[ClassInfo] = []
        self.built_locals.discard(target.id)
        if iterating:
            container = value.value if isinstance(value, ast.Subscript) else value  # self.layers[:n]
            if (
                isinstance(container, ast.Attribute)
                and isinstance(container.value, ast.Name)
                and container.value.id == self.evaluator.self_name
                and self.evaluator.cls is not None
            ):
                found = self.evaluator.index.attr_classes_of(self.evaluator.cls, container.attr, element=True)
            if not found:
                found = self._infos(self._element_classes(value, iterating=True))  # for head in heads.values()
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id not in self.evaluator.env:
            info = self.evaluator.index.classes.get(value.func.id)
            found = [info] if info is not None else []
            if found:
                self.built_locals.add(target.id)
        elif isinstance(value, ast.Call) and (registered := self._registry_of(value.func)) is not None:
            found = self._infos(registered)  # SOLVERS[method](func=func, y0=y0)
            self.built_locals.add(target.id)
        else:
            found = self._instance_classes(value) or self._infos(self._element_classes(value, iterating=False))
        if found:
            self.instance_classes[target.id] = tuple(info.name for info in found)
        else:
            self.instance_classes.pop(target.id, None)
        displayed = constructed_classes(self.evaluator.index, value) if not iterating else None
        if displayed:
            self.container_classes[target.id] = (displayed, not isinstance(value, ast.Dict))  # heads = {"a": Head(2)}
        else:
            self.container_classes.pop(target.id, None)

    def _element_classes(self, value: ast.expr, iterating: bool) -> tuple[str, ...]:
        """The in-file classes an element of a display of instances may be, taken out of it with
        `heads[k]` or `heads.get(k)`, or (when `iterating`) by looping over `heads`,
        `heads.values()` or `heads.items()`' second element (see bind_instances)."""
        holder: ast.expr | None = None
        if isinstance(value, ast.Subscript) and not iterating:
            holder = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args[1:]:
            wanted = ("values",) if iterating else ("get",)
            holder = value.func.value if value.func.attr in wanted and (iterating or value.args) else None
        elif iterating:
            holder = value
        if not isinstance(holder, ast.Name):
            return ()
        return self._held_in(holder.id, bare=holder is value)

    def _held_in(self, name: str, bare: bool) -> tuple[str, ...]:
        """The classes of the instances the display bound to `name` holds; `bare`: taken by
        iterating the name itself (the elements of a list, but the keys of a dict)."""
        if name in self.container_classes:
            classes, elements_iterate = self.container_classes[name]
        elif name in self.evaluator.env:
            return ()  # a parameter or another local of this function hides the file's name
        else:
            classes, elements_iterate = instance_container(self.evaluator.index, name) or ((), False)
        return classes if elements_iterate or not bare else ()

    def _infos(self, names: tuple[str, ...]) -> list[ClassInfo]:
        classes = self.evaluator.index.classes
        return [classes[name] for name in names if name in classes]


# `= name` at the end of a line or before `if` (`fn = a if flag else b`): a name assigned as a value
_ASSIGNED_NAME = re.compile(r"(?<![=!<>])=\s*([A-Za-z_]\w*)\s*(?:$|if\b|#)", re.MULTILINE)


def _function_aliases(function: ast.AST, functions: dict[str, ast.FunctionDef]) -> dict[str, tuple[str, ...]]:
    """See CalleeResolver.function_aliases."""
    assignments: list[ast.Assign] = []
    stored: set[str] = set()  # every name the function binds, by any statement
    plain_targets: set[int] = set()
    ruled_out: set[str] = set()
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = function.args
        ruled_out.update(a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg] if a)
    own = own_nodes(function)
    for node in own:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            ruled_out.add(node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assignments.append(node)
            plain_targets.add(id(node.targets[0]))
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stored.add(node.id)
            if id(node) not in plain_targets:
                ruled_out.add(node.id)  # a loop target, an unpacking, `with ... as`, `del`, `+=`
    for node in walk(function):  # `global fn` here, or `nonlocal fn` in a nested function, rebinds it
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            ruled_out.update(node.names)
    chosen: dict[str, list[str]] = {}
    bindings: dict[str, list[ast.Assign]] = {}
    for assignment in assignments:
        target = assignment.targets[0]
        assert isinstance(target, ast.Name)
        names = _function_names(assignment.value, functions, stored)
        if names is None:
            ruled_out.add(target.id)
        else:
            chosen.setdefault(target.id, []).extend(names)
            bindings.setdefault(target.id, []).append(assignment)
    parents = {id(child): node for node in own for child in child_nodes(node)}
    parents.update({id(child): function for child in child_nodes(function)})
    return {
        name: tuple(dict.fromkeys(found))
        for name, found in chosen.items()
        if name not in ruled_out and _exclusive(bindings[name], parents)
    }


def _exclusive(assignments: list[ast.Assign], parents: dict[int, ast.AST]) -> bool:
    """One binding, or bindings each in its own arm of `if` statements, so that no path runs two
    of them (`fn = a; fn = b` calls only `b`): every pair meets first at an `if`, one in its body,
    the other in its `else`."""
    def chain(node: ast.AST) -> list[ast.AST]:
        found = [node]
        while id(found[-1]) in parents:
            found.append(parents[id(found[-1])])
        return found

    def in_body(path: list[ast.AST], meet: ast.If) -> bool:
        """Whether the step of `path` just below `meet` is a statement of its body (not its else)."""
        below = path[next(i for i, n in enumerate(path) if n is meet) - 1]
        return any(below is statement for statement in meet.body)

    chains = [chain(a) for a in assignments]
    for i, first in enumerate(chains):
        for second in chains[i + 1 :]:
            ids = {id(n) for n in second}
            meet = next((n for n in first if id(n) in ids), None)
            if not isinstance(meet, ast.If) or in_body(first, meet) == in_body(second, meet):
                return False
    return True


def _function_names(value: ast.expr, functions: dict[str, ast.FunctionDef], stored: set[str]) -> list[str] | None:
    """The module-level functions `value` names (`f`, or `f if c else g`), or None."""
    if isinstance(value, ast.Name) and value.id in functions and value.id not in stored:
        return [value.id]
    if isinstance(value, ast.IfExp):
        body, orelse = _function_names(value.body, functions, stored), _function_names(value.orelse, functions, stored)
        return body + orelse if body is not None and orelse is not None else None
    return None


def _is_staticmethod(function: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)


def _mentions_library(index: ModuleIndex) -> bool:
    """A file that never names torch.distributions (most) has no subclass of it: no walk needed."""
    return "distributions" in index.source


def _library_methods(index: ModuleIndex, cls: ClassInfo) -> dict[str, tuple[ast.FunctionDef, ClassInfo]]:
    """Name -> the method torch's code reaches on an instance of `cls`, where `cls` derives
    from a torch.distributions class (nothing otherwise): its own and its in-file bases' methods,
    the first definition winning, dunder methods left out."""
    if not _mentions_library(index):
        return {}
    chain = index.in_file_ancestry(cls)
    if not any(name is not None and name.startswith(LIBRARY_DISPATCH_ROOT) for info in chain for name in info.base_names):
        return {}
    found: dict[str, tuple[ast.FunctionDef, ClassInfo]] = {}
    for info in chain:
        for name, method in info.methods.items():
            if not name.startswith("__") and name not in found:
                found[name] = (method, info)
    return found
