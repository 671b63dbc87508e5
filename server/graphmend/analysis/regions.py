"""Which functions are compiled: the entry points of TorchDynamo regions in one file.

A graph break only matters in code dynamo traces. Entries are
- functions decorated with `torch.compile` / `torch._dynamo.optimize` (any alias, with or without
  arguments), at any nesting depth;
- targets of `torch.compile(f)`, `torch.compile(model)`, `torch.compile(model.method)`,
  `torch._dynamo.optimize(...)(f)` and `model.compile()` in the same file;
- every `forward` of an nn.Module subclass, unless `compile-forward = false`: users compile whole
  models, so a model file is compiled code even when the compile call lives elsewhere;
- functions, methods and classes the configuration names as compiled (`compiled`, and the targets
  of `samples`): the user compiles them somewhere GraphMend does not look (`named`);
- functions the language server found called from compiled code in other files (`extra`);
- the wrapper a decorator returns, where it decorates a compiled function: in this file, or named
  by a compiled caller in another (`extra`, keyed by decorators.entry_key). It is the frame dynamo
  compiles (analysis/decorators.py).
The walker then follows calls from entries into functions and methods of the same file, so
helpers are analysed as compiled too.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from ..astwalk import walk
from .decorators import Wrapper, Wrapping, parse_entry_key, returned_wrapper
from .symbols import COMPILE_FUNCTIONS, ClassInfo, ModuleIndex, decorator_target

# Cheap textual pre-check: without a mention of compile/optimize as a word (not `compiling`),
# there is no decorator or compile call to find, and the whole-tree scan is skipped.
_COMPILE_MARKER = re.compile(r"\b(?:compile|optimize)\b")


@dataclass
class Entry:
    function: ast.FunctionDef
    cls: ClassInfo | None
    reason: str
    explicit: bool = True  # decorated with or passed to torch.compile, as opposed to a forward
    wrapping: Wrapping | None = None  # a decorator's wrapper: what it wraps
    # for a wrapper of functions in this file: those functions, which its call of the wrapped
    # function runs (walked from there, so that their breaks cost the wrapper's frame)
    decorated: tuple[tuple[ast.FunctionDef, ClassInfo | None], ...] = ()
    # called from compiled code in another file: walked only once this file's own entries have
    # been, so that a function this file's compiled code calls too is walked with the argument
    # kinds its caller here knows (walked first, as an entry, it knew none of them)
    deferred: bool = False
    # a forward (pre-)hook a module registers on itself (`self.register_forward_hook(...)`): the
    # class whose instance the hook's `module` parameter is
    hooked_module: ClassInfo | None = None


def find_entries(
    tree: ast.Module,
    index: ModuleIndex,
    text: str,
    compile_forward: bool,
    extra: tuple[tuple[str, str], ...] = (),
    named: tuple[tuple[str, str], ...] = (),
) -> list[Entry]:
    entries: list[Entry] = []
    seen: set[int] = set()

    def add(function: ast.FunctionDef | None, cls: ClassInfo | None, reason: str, explicit: bool = True, deferred: bool = False) -> None:
        if function is None or id(function) in seen or id(function) in index.disabled or id(function) in index.opaque:
            return
        seen.add(id(function))
        entries.append(Entry(function, cls, reason, explicit, deferred=deferred))

    marked_lines: set[int] = set()
    if "compile" in text or "optimize" in text:  # a substring search is far cheaper than the regex
        line, position = 1, 0
        for match in _COMPILE_MARKER.finditer(text):  # in order: count newlines once, incrementally
            line += text.count("\n", position, match.start())
            position = match.start()
            marked_lines.add(line)
    if marked_lines:
        _decorated_and_called(tree, index, marked_lines, add)
    # named in the config: compiled by the user's own call, like a decorated function; called
    # from compiled code in another file: analysed with what the callers pass
    wrappers: dict[str, tuple[bool, bool, str]] = {}
    for listed, explicit in ((named, True), (extra, False)):
        for qualified, reason in listed:
            decorator = parse_entry_key(qualified)
            if decorator is not None:
                name, breaks, method_of_module = decorator
                known = wrappers.get(name, (False, False, reason))
                wrappers[name] = (known[0] or breaks, known[1] or method_of_module, known[2])
                continue
            if ".<locals>." in qualified:  # `make.<locals>.step`: a closure, as `__qualname__` names it
                outer, *inner = qualified.split(".<locals>.")
                owner, _, method = outer.rpartition(".")
                info = index.classes.get(owner) if owner else None
                start = (info.methods.get(method) if info is not None else None) if owner else index.functions.get(outer)
                add(_nested_function(start, inner), None, reason, explicit, deferred=not explicit)
                continue
            owner, _, method = qualified.rpartition(".")
            if owner:
                info = index.classes.get(owner)
                add(info.methods.get(method) if info is not None else None, info, reason, explicit, deferred=not explicit)
            elif qualified in index.classes:  # a class: what calling an instance runs, as a compiled forward is
                info = index.classes[qualified]
                for called in _called_methods(index, info):
                    add(called, info, reason, explicit=False, deferred=not explicit)
            else:
                add(index.functions.get(qualified), None, reason, explicit, deferred=not explicit)
    for skipped in index.frame_only:  # disable(recursive=False): its frame runs eagerly, its callees compile
        cls = index.owner.get(id(skipped))
        for callee, callee_cls in _direct_callees(skipped, cls, index):
            add(callee, callee_cls, f"called from `{skipped.name}`, whose own frame `torch.compiler.disable(recursive=False)` skips", explicit=False)
    # hooks run inside the module call dynamo traces (a substring test first: every module has register_buffer)
    if compile_forward and ("register_forward" in text or "register_module_forward" in text):
        for function, cls, line, hooked in _hooks(tree, index):
            add(function, cls, f"`{_describe(function, cls)}`, registered as a module hook on line {line}", explicit=False)
            if hooked is not None and entries and entries[-1].function is function:
                entries[-1] = replace(entries[-1], hooked_module=hooked)
    if compile_forward:
        for info in _parents_first(index):
            forward = info.methods.get("forward")
            if info.is_module and forward is not None:
                add(forward, info, f"`{info.name}.forward`, the forward of an nn.Module", explicit=False)
    for name, (breaks, method_of_module, reason) in wrappers.items():
        decorator_function = index.functions.get(name)
        wrapper = returned_wrapper(decorator_function) if decorator_function is not None else None
        if wrapper is not None and id(wrapper.function) not in seen:
            seen.add(id(wrapper.function))
            wrapping = Wrapping(wrapper.wrapped_param, breaks, method_of_module, _dotted(wrapper))
            entries.append(Entry(wrapper.function, None, f"the wrapper `@{name}` puts around {reason}", False, wrapping))
    # first: walked before the functions they wrap, so that those are reached through the wrapper's call
    return _in_file_wrappers(entries, index, seen) + entries


def _called_methods(index: ModuleIndex, info: ClassInfo) -> list[ast.FunctionDef]:
    """What calling an instance of `info` runs under torch.compile: a `__call__` it or an in-file
    base defines (compiling a module compiles its `__call__`: GPyTorch's `ExactGP.__call__` checks
    its inputs before the module call), and its `forward` (nn.Module's own `__call__` runs it)."""
    found = [_own_call(index, info), index.method(info, "forward")]
    return [method for method in found if method is not None]


def _own_call(index: ModuleIndex, info: ClassInfo, seen: frozenset[str] = frozenset()) -> ast.FunctionDef | None:
    """The `__call__` Python finds first on `info`, where the file defines it: its own, else along
    the bases in order while they are in the file (a base from elsewhere, such as nn.Module, has a
    `__call__` of its own that would come first)."""
    if "__call__" in info.methods:
        return info.methods["__call__"]
    for base in info.node.bases:
        base_info = index.classes.get(base.id) if isinstance(base, ast.Name) else None
        if base_info is None or base_info.name in seen:
            return None
        found = _own_call(index, base_info, seen | {info.name})
        if found is not None:
            return found
    return None


def _nested_function(function: ast.FunctionDef | None, names: list[str]) -> ast.FunctionDef | None:
    """The function defined inside `function` under each of `names` in turn (`make.<locals>.step`)."""
    for name in names:
        if function is None:
            return None
        function = next((s for s in walk(function) if isinstance(s, ast.FunctionDef) and s.name == name and s is not function), None)
    return function


def _in_file_wrappers(entries: list[Entry], index: ModuleIndex, seen: set[int]) -> list[Entry]:
    """The wrappers of this file's decorators on compiled functions (`@timed def forward`)."""
    found: dict[int, Entry] = {}
    for entry in entries:
        for decorator in entry.function.decorator_list:
            target = decorator_target(decorator)
            if not isinstance(target, ast.Name) or target.id not in index.functions:
                continue
            wrapper = returned_wrapper(index.functions[target.id])
            if wrapper is None or id(wrapper.function) in seen:
                continue
            method_of_module = entry.cls is not None and entry.cls.is_module
            known = found.get(id(wrapper.function))
            if known is None:
                reason = f"the wrapper `@{target.id}` puts around the compiled `{entry.function.name}`"
                found[id(wrapper.function)] = Entry(
                    wrapper.function, None, reason, False, Wrapping(wrapper.wrapped_param, False, method_of_module, _dotted(wrapper)), ((entry.function, entry.cls),)
                )
            else:
                assert known.wrapping is not None
                module_flag = known.wrapping.module_method or method_of_module
                known.wrapping = replace(known.wrapping, module_method=module_flag)
                known.decorated = (*known.decorated, (entry.function, entry.cls))
    return list(found.values())


def _dotted(wrapper: Wrapper) -> str:
    return ".".join((*wrapper.path, wrapper.function.name))


def _direct_callees(function: ast.FunctionDef, cls: ClassInfo | None, index: ModuleIndex) -> list[tuple[ast.FunctionDef, ClassInfo | None]]:
    """The module's functions (`helper(...)`) and the class's methods (`self.step(...)`) that
    `function` calls."""
    found: list[tuple[ast.FunctionDef, ClassInfo | None]] = []
    for node in walk(function):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in index.functions and func.id not in index.imports:
            found.append((index.functions[func.id], None))
        elif cls is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            method = index.method(cls, func.attr)
            if method is not None:
                found.append((method, cls))
    return found


def _parents_first(index: ModuleIndex) -> list[ClassInfo]:
    """Module classes ordered so that a class comes after every class that holds it as a
    submodule: a child's forward is then walked after its callers have passed it their
    argument kinds and loop context (a break in a layer called in the parent's layer loop makes
    the parent run eagerly)."""
    children: dict[str, set[str]] = {name: set() for name in index.classes}
    has_parent: set[str] = set()
    for info in index.classes.values():
        held = [n for table in (info.attr_classes, info.attr_element_classes) for names in table.values() for n in names]
        for child in held:
            if child in children and child != info.name:
                children[info.name].add(child)
                has_parent.add(child)
    order: list[ClassInfo] = []
    placed: set[str] = set()
    pending = [name for name in index.classes if name not in has_parent]
    depth: dict[str, int] = {}
    while pending:  # longest distance from a root, so every parent precedes its children
        name = pending.pop()
        for child in children[name]:
            if depth.get(child, -1) < depth.get(name, 0) + 1 and depth.get(name, 0) < len(children):
                depth[child] = depth.get(name, 0) + 1
                pending.append(child)
    for name in sorted(index.classes, key=lambda n: depth.get(n, 0)):
        if name not in placed:
            placed.add(name)
            order.append(index.classes[name])
    return order


def _statements(body: list[ast.stmt]):  # type: ignore[no-untyped-def]
    """Every statement, however nested, without visiting expressions (cheap on large files)."""
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body)


def _own_expressions(stmt: ast.stmt):  # type: ignore[no-untyped-def]
    """The expression nodes of a statement that are not inside its nested statements."""
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, ast.AST) and not isinstance(item, ast.stmt):
                yield from walk(item)


def _decorated_and_called(tree: ast.Module, index: ModuleIndex, marked_lines: set[int], add) -> None:  # type: ignore[no-untyped-def]
    instances: dict[str, str] = {}  # variable -> in-file class it was assigned an instance of
    calls: list[ast.Call] = []
    lowest, highest = min(marked_lines), max(marked_lines)
    for stmt in _statements(tree.body):
        if isinstance(stmt, ast.FunctionDef) and stmt.decorator_list:
            for decorator in stmt.decorator_list:
                if index.qualname(decorator_target(decorator)) in COMPILE_FUNCTIONS:
                    add(stmt, index.owner.get(id(stmt)), f"`{stmt.name}`, decorated with @torch.compile")
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Name) and func.id in index.classes:
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        instances[target.id] = func.id
        # Only statements on a line that mentions compile/optimize can hold a compile call.
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        if first <= highest and last >= lowest and any(first <= line <= last for line in marked_lines):
            calls.extend(node for node in _own_expressions(stmt) if isinstance(node, ast.Call))
    for call in calls:
        for function, cls in _compile_targets(call, index, instances):
            add(function, cls, f"`{_describe(function, cls)}`, passed to torch.compile on line {call.lineno}")


def _compile_targets(
    call: ast.Call, index: ModuleIndex, instances: dict[str, str]
) -> list[tuple[ast.FunctionDef, ClassInfo | None]]:
    """The functions a compile call compiles (an instance: what calling it runs, see `_called_methods`)."""
    found = _compile_target(call, index, instances)
    if isinstance(found, ClassInfo):
        return [(method, found) for method in _called_methods(index, found)]
    return [found] if found is not None else []


def _compile_target(
    call: ast.Call, index: ModuleIndex, instances: dict[str, str]
) -> tuple[ast.FunctionDef, ClassInfo | None] | ClassInfo | None:
    func = call.func
    argument: ast.expr | None = None
    if index.qualname(func) in COMPILE_FUNCTIONS and call.args:
        argument = call.args[0]
    elif isinstance(func, ast.Call) and index.qualname(func.func) in COMPILE_FUNCTIONS and call.args:
        argument = call.args[0]  # torch._dynamo.optimize("inductor")(fn)
    elif isinstance(func, ast.Attribute) and func.attr == "compile" and isinstance(func.value, ast.Name):
        cls = index.classes.get(instances.get(func.value.id, ""))
        forward = index.method(cls, "forward") if cls is not None else None
        # model.compile() compiles `_call_impl`, not an overriding `__call__` (measured, torch 2.13)
        return (forward, cls) if forward is not None else None
    if argument is None:
        return None
    if isinstance(argument, ast.Name):
        if argument.id in index.functions:
            return index.functions[argument.id], None
        return index.classes.get(instances.get(argument.id, ""))
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and argument.func.id in index.classes:
        return index.classes[argument.func.id]
    if isinstance(argument, ast.Attribute):
        owner_name = instances.get(argument.value.id, "") if isinstance(argument.value, ast.Name) else ""
        owner = index.classes.get(owner_name)
        if owner is not None:
            method = index.method(owner, argument.attr)
            return (method, index.owner.get(id(method), owner)) if method is not None else None
        candidates = [
            (info.methods[argument.attr], info) for info in index.classes.values() if argument.attr in info.methods
        ]
        if len(candidates) == 1:  # `self.step` / `obj.step` with one class defining `step`
            return candidates[0]
    return None


# Registration methods and functions whose hook dynamo calls while tracing a module's call.
HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
HOOK_FUNCTIONS = frozenset(
    {"torch.nn.modules.module.register_module_forward_hook", "torch.nn.modules.module.register_module_forward_pre_hook"}
)


def _hooks(tree: ast.Module, index: ModuleIndex) -> list[tuple[ast.FunctionDef, ClassInfo | None, int, ClassInfo | None]]:
    """Same-file functions and methods registered as forward (pre-)hooks: `m.register_forward_hook(fn)`,
    `self.register_forward_pre_hook(self._check)`, `register_module_forward_hook(fn)`; each with
    the class that registers it on itself (`self.register_forward_hook(...)` in a method of a
    module class of the file), whose instance the hook is called with as its `module`."""
    found: list[tuple[ast.FunctionDef, ClassInfo | None, int, ClassInfo | None]] = []
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        is_method = isinstance(func, ast.Attribute) and func.attr in HOOK_METHODS
        if not is_method and index.qualname(func) not in HOOK_FUNCTIONS:
            continue
        on_self = is_method and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
        registering = next((info for info in index.classes.values() if info.is_module and any(n is node for n in walk(info.node))), None) if on_self else None
        hook = node.args[0]
        if isinstance(hook, ast.Name) and hook.id in index.functions:
            found.append((index.functions[hook.id], None, node.lineno, registering))
        elif isinstance(hook, ast.Attribute) and isinstance(hook.value, ast.Name) and hook.value.id == "self":
            for info in index.classes.values():
                method = info.methods.get(hook.attr)
                if method is not None and any(n is node for n in walk(info.node)):
                    found.append((method, info, node.lineno, registering))
    return found


def _describe(function: ast.FunctionDef, cls: ClassInfo | None) -> str:
    return f"{cls.name}.{function.name}" if cls is not None else function.name
