"""Compiled code across modules: a helper in `utils.py` called from a compiled `forward` in
`model.py` is traced by dynamo too, so its breaks count.

The analyser works on one file. For an analysed file, the calls its compiled functions make to
imported names are listed (`call_sites`) and resolved with jedi (imports, re-exports,
`from . import`, aliases: `resolve`); every target that is a function or method of another file
under the given roots is then analysed as an extra compiled entry of that file
(`Config.extra_entries`). The language server does this for open documents as they change
(lsp/crossfile.py keeps what each caller contributes); the command line for the files it checks,
to a fixed point (`cross_module_entries`).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .analysis import AnalysisResult
from .analysis.decorators import Wrapping, entry_key
from .analysis.source import SourceFile
from .analysis.symbols import ClassInfo, ModuleIndex, decorator_target, walk_top_level
from .astwalk import walk

# Calls into these never lead to workspace code worth following.
_SKIPPED_ROOTS = frozenset({"torch", "numpy", "math", "builtins", "typing", "collections", "functools", "itertools", "logging", "warnings"})


@dataclass(frozen=True)
class CallSite:
    line: int  # 1-based
    column: int  # characters, at the called name
    callee: str  # source text of the called expression
    caller: str  # compiled function making the call
    imported: str = ""  # what the call's root name is imported as (`..utils.helper`, `pkg.mod`)
    bases: tuple[str, ...] = ()  # `self.<method>()`: the imported bases of the class chain, as written
    # A decorator of the compiled function (`@capture_outputs`): its wrapper is what is compiled,
    # and this is what the wrapper needs to know of the function it wraps (analysis/decorators.py)
    decorates: Wrapping | None = None


def call_sites(result: AnalysisResult, text: str) -> tuple[CallSite, ...]:
    """Calls made by the file's compiled functions to names it imports from elsewhere, and to
    methods a class inherits from a base imported from elsewhere (`self.get_extended_attention_mask`
    of a transformers model, defined on `PreTrainedModel`'s mixin in `modeling_utils.py`)."""
    if result.tree is None or result.index is None or not result.compiled:
        return ()
    index = result.index
    source = result.source or SourceFile(text)
    aliases = _import_aliases(result.tree, index)
    sites: list[CallSite] = []
    for qualified, function in _functions(result.tree):
        if qualified not in result.compiled:
            continue
        owner = index.classes.get(qualified.split(".", 1)[0]) if "." in qualified else None
        inherited = _inherited_from(index, owner) if owner is not None else None
        for decorator in function.decorator_list:
            applied = decorator_target(decorator)
            imported = _imported_root(applied, index, aliases)
            if imported is not None:
                wrapping = Wrapping("", qualified in result.broken, owner is not None and owner.is_module)
                span = source.span(applied)
                column = span.end_col - len(applied.attr) if isinstance(applied, ast.Attribute) else span.start_col
                sites.append(CallSite(span.end_line, column, ast.unparse(applied), qualified, imported, decorates=wrapping))
        for node in walk(function):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if inherited is not None and _self_method(func):
                assert isinstance(func, ast.Attribute)
                if func.attr not in inherited[0]:
                    span = source.span(func)
                    sites.append(CallSite(span.end_line, span.end_col - len(func.attr), ast.unparse(func), qualified, inherited[1], inherited[2]))
                continue
            held = _imported_attribute_class(index, owner, func)
            if held is not None:  # `self.box_coder.decode(...)` with `self.box_coder = det_utils.BoxCoder(...)`
                assert isinstance(func, ast.Attribute)
                imported = _import_of(held.split(".", 1)[0], index, aliases)
                if imported is not None:
                    span = source.span(func)
                    sites.append(CallSite(span.end_line, span.end_col - len(func.attr), f"{held}.{func.attr}", qualified, imported))
                continue
            called = _imported_root(func, index, aliases)
            if called is None:
                continue
            span = source.span(func)
            column = span.end_col - len(func.attr) if isinstance(func, ast.Attribute) else span.start_col
            sites.append(CallSite(span.end_line, column, ast.unparse(func), qualified, called))
    return tuple(sorted(set(sites), key=lambda s: (s.line, s.column)))


def _imported_attribute_class(index: ModuleIndex, owner: ClassInfo | None, func: ast.expr) -> str | None:
    """For `self.<attr>.<method>` where the class chain's `__init__` sets `<attr>` to an instance
    of one class imported from elsewhere: that class, as written (`det_utils.BoxCoder`)."""
    if owner is None or not (isinstance(func, ast.Attribute) and _self_method(func.value)):
        return None
    attribute = func.value.attr  # type: ignore[attr-defined]
    for info in _class_chain(index, owner):
        held = info.attr_imported_classes.get(attribute)
        if held is not None:
            return held or None
    return None


def _class_chain(index: ModuleIndex, owner: ClassInfo) -> Iterator[ClassInfo]:
    """`owner`, then its bases defined in the same file, breadth first, each once."""
    pending, seen = [owner], set()
    while pending:
        info = pending.pop(0)
        if info.name in seen:
            continue
        seen.add(info.name)
        yield info
        pending.extend(index.classes[name] for name in info.local_bases if name in index.classes)


def _imported_root(expression: ast.expr, index: ModuleIndex, aliases: dict[str, str]) -> str | None:
    """What the root name of `helper`, `module.helper` is imported as, unless it is not imported
    or leads nowhere worth following (torch, the standard library)."""
    root = expression
    while isinstance(root, ast.Attribute):
        root = root.value
    return _import_of(root.id, index, aliases) if isinstance(root, ast.Name) else None


def _import_of(name: str, index: ModuleIndex, aliases: dict[str, str]) -> str | None:
    """What the module-level `name` is imported as (or an alias of), unless it leads nowhere worth following."""
    target = index.imports.get(name) or aliases.get(name)
    return None if target is None or target.split(".", 1)[0] in _SKIPPED_ROOTS else target


def _import_aliases(tree: ast.Module, index: ModuleIndex) -> dict[str, str]:
    """Module-level names bound to an imported name or an attribute of one (`scale =
    helpers.scale`): what each stands for, as an import target (`.helpers.scale`)."""
    aliases: dict[str, str] = {}
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            continue
        parts: list[str] = []
        value = statement.value
        while isinstance(value, ast.Attribute):
            parts.insert(0, value.attr)
            value = value.value
        name = statement.targets[0].id
        if isinstance(value, ast.Name) and value.id in index.imports and name not in index.imports:
            aliases[name] = ".".join([index.imports[value.id], *parts])
    return aliases


def _self_method(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"


def _inherited_from(index: ModuleIndex, owner: ClassInfo) -> tuple[frozenset[str], str, tuple[str, ...]] | None:
    """For a class with a base imported from another module (not torch's): the names its in-file
    class chain defines (methods, attributes set in `__init__`), which `self.<name>` then means,
    the first such base's import, which the others may come from, and every imported base as
    written in the file. None when every base is in the file or torch's (`nn.Module`'s own
    methods break nothing worth following)."""
    defined: set[str] = set()
    imported: str | None = None
    written: list[str] = []
    for info in _class_chain(index, owner):
        defined.update(info.methods, info.attr_kinds, info.attr_classes)
        defined.update(t.id for stmt in info.node.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                       for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) if isinstance(t, ast.Name))
        for base, node in zip(info.base_names, info.node.bases):
            if base and base.lstrip(".").split(".", 1)[0] not in _SKIPPED_ROOTS and base.split(".")[-1] not in info.local_bases:
                imported = imported or base
                written.append(ast.unparse(node))
    return (frozenset(defined), imported, tuple(dict.fromkeys(written))) if imported is not None else None


def _functions(tree: ast.Module):
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement.name, statement
        elif isinstance(statement, ast.ClassDef):
            for inner in statement.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{statement.name}.{inner.name}", inner


def reachable_names(tree: ast.Module) -> frozenset[str]:
    """The names by which `resolve` may reach a function of this module through a class: those
    of its top-level classes' methods and class-level assignments (`act = staticmethod(gelu)`,
    which jedi follows to `gelu`), and of its module-level functions and assignments.

    A `self.<attribute>()` call of a class with a base from another file resolves to a function
    only where some class in the checked files defines or assigns that attribute at class level.
    Most such calls in transformers' modular files are of submodules the base sets in
    `__init__` (`self.q_proj(...)`), which jedi, asked on the class, searched the whole chain of
    bases for and did not find: 508 of the 797 calls resolved over `models/`, and most of the
    time jedi took (`_called_from_compiled_code` leaves them out by these names)."""
    names = _defined(walk_top_level(tree.body))  # looking inside `if is_torch_available():` and such
    for statement in walk_top_level(tree.body):
        if isinstance(statement, ast.ClassDef):
            names |= _defined(walk_top_level(statement.body))
    return frozenset(names)


def _defined(statements: Iterator[ast.stmt]) -> set[str]:
    """The names `statements` define with `def` or assign to."""
    names: set[str] = set()
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def may_reach_a_function(site: CallSite, reachable: frozenset[str]) -> bool:
    """Whether `site` could resolve to a function of the checked files, whose `reachable_names`
    together are `reachable`: a call of an inherited `self.<attribute>` only where one of them
    defines or assigns that attribute (other calls are left to jedi)."""
    return not site.bases or site.callee.rsplit(".", 1)[-1] in reachable


def resolve(text: str, path: Path, roots: list[Path], sites: tuple[CallSite, ...], header: str | None = None) -> dict[Path, dict[str, str]]:
    """Where each call site goes: {target file: {"helper" or "Class.method": reason}}, for
    targets inside one of the workspace `roots` other than `path` itself. `header` is the file's
    `import_header` where the caller has it (else it is computed from `text`)."""
    resolved_roots = _resolved(roots)
    # resolved first: from a relative path (`check models` run inside `transformers/`) the walk up
    # to the top-level package would stop at `.`, and every absolute import went to jedi
    here = path.resolve()
    sites = tuple(site for site in sites if _may_lead_inside(site.imported, here, resolved_roots))
    if not sites:
        return {}
    import jedi  # imported lazily: a few hundred ms, only once a document has such calls

    root = next((folder for folder in (here, *here.parents) if folder in resolved_roots), path.parent)
    if header is None:
        try:
            header = import_header(ast.parse(text), text)
        except (SyntaxError, ValueError):
            header = None
    code, places = _import_stub(header, sites) if header is not None else (text, {site: (site.line, site.column) for site in sites})
    # Absolute imports of the checked package by its own name (`from torchvision.ops import boxes`,
    # checked from inside `torchvision/`) start from the folder above it, which jedi would not
    # search; searched first, so that a clone of a package also installed (not editable) leads into
    # the clone, which is what is checked.
    project = jedi.Project(path=str(root), sys_path=[str(_import_root(here)), *_environment_sys_path()])
    script = jedi.Script(code=code, path=str(path), project=project)
    targets: dict[Path, dict[str, str]] = {}
    for site in sites:
        try:
            names = script.goto(*places[site], follow_imports=True)
            if names and all(name.type == "statement" for name in names):  # `scale = helpers.scale`: its value
                names = script.infer(*places[site])
        except Exception:
            continue
        for name in names:
            module_path = name.module_path
            if name.type != "function" or module_path is None:
                continue
            target = Path(module_path).resolve()
            if target == here or not _inside(target, resolved_roots):
                continue
            qualified = _qualified(name)
            if qualified is None:
                continue
            if site.decorates is not None:
                if "." in qualified:
                    continue  # a method or class as a decorator: not a wrapper returned by a function
                reason = f"the compiled `{site.caller}` in {path.name} (line {site.line})"
                qualified = entry_key(qualified, site.decorates)
            else:
                reason = f"called from the compiled `{site.caller}` in {path.name} (line {site.line})"
            targets.setdefault(target, {}).setdefault(qualified, reason)
    return targets


def import_header(tree: ast.Module, text: str) -> str:
    """The module's top-level statements that import (as written: `if TYPE_CHECKING:` and `try:`
    blocks whole) and its aliases (`helper = mod.helper`): all that binds the names a call site's
    root can be (`call_sites` takes only imported roots)."""
    lines = text.splitlines()
    kept: list[str] = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # an import inside a function binds nothing at module level
        if any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in walk(statement)) or (
            isinstance(statement, ast.Assign) and isinstance(statement.value, (ast.Name, ast.Attribute))
        ):
            kept.extend(lines[statement.lineno - 1 : statement.end_lineno])
    return "".join(line + "\n" for line in kept)


def _import_stub(header: str, sites: tuple[CallSite, ...]) -> tuple[str, dict[CallSite, tuple[int, int]]]:
    """What jedi needs to resolve the sites, and where each site is in it: the file's
    `import_header`, then a line per site naming what it calls (`helper`, `module.helper`; for
    `self.method()` the method on a class with the same imported bases). jedi parses the code it
    is given before it resolves anything, 0.2 s for a 3,000-line model file, and that parse was
    most of `check`'s time over transformers' `models/`."""
    kept = header.splitlines()
    classes: dict[tuple[str, ...], str] = {}
    for bases in dict.fromkeys(site.bases for site in sites if site.bases):
        classes[bases] = f"_GraphmendInherits{len(classes)}"
        kept.append(f"class {classes[bases]}({', '.join(bases)}): ...")
    places: dict[CallSite, tuple[int, int]] = {}
    for site in sites:
        if site.bases:
            attribute = site.callee.rsplit(".", 1)[-1]
            expression, column = f"{classes[site.bases]}.{attribute}", len(classes[site.bases]) + 1
        else:
            expression = site.callee
            column = len(expression) - len(expression.rsplit(".", 1)[-1]) if "." in expression else 0
        kept.append(expression)
        places[site] = (len(kept), column)
    return "\n".join(kept) + "\n", places


@functools.cache
def _environment_sys_path() -> tuple[str, ...]:
    """The sys.path of jedi's default environment, asked once per process (asking per call tripled
    the time `check` spent resolving calls)."""
    import jedi

    return tuple(jedi.get_default_environment().get_sys_path())


def _qualified(name) -> str | None:
    full, module = name.full_name, name.module_name
    if not full or not module or not full.startswith(module + "."):
        return None
    qualified = full[len(module) + 1 :]
    return qualified if qualified.count(".") <= 1 else None  # functions and methods of top-level classes


def _may_lead_inside(imported: str, path: Path, resolved_roots: frozenset[Path]) -> bool:
    """Whether the module an import names, imported from the file at `path` (resolved), could lie
    under one of `roots`: only then is jedi asked.

    jedi parses the whole calling file before it resolves anything (0.2 s for a 3,000-line model
    file), which made cross-module resolution most of `check`'s time on a tree such as
    transformers' `models/`, whose model files import mostly from modules outside it
    (`...utils`, `...modeling_utils`). The module is found the way Python finds it: a relative
    import from the file's package, an absolute one from the folder above the file's top-level
    package. Where it exists outside every root, the call is not followed (a re-export from
    there back into the roots is the one case this gives up). Where no file is found (an
    installed package, a namespace package, a dynamic path), jedi decides, as before.
    """
    if not imported:
        return True
    level = len(imported) - len(imported.lstrip("."))
    parts = [part for part in imported.lstrip(".").split(".") if part]
    if level:
        base = path.parent
        for _ in range(level - 1):
            base = base.parent
    else:
        base = _import_root(path)
    found: Path | None = None
    for depth in range(len(parts), 0, -1):  # the longest prefix that is a module: the rest are names in it
        stem = base.joinpath(*parts[:depth])
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file():
                found = candidate
                break
        if found is not None:
            break
    if found is None:  # an installed or namespace package (absolute), or a name in `base`'s package
        if not level and parts and parts[0] in sys.stdlib_module_names:
            return False  # `sys.getrefcount`, `random.uniform`: the standard library, never the roots
        return not level or _inside(base.resolve(), resolved_roots)
    return _inside(found.resolve(), resolved_roots)


def _resolved(roots: list[Path]) -> frozenset[Path]:
    """`roots` resolved (a check of a tree passes one root per model folder: hundreds)."""
    key = tuple(roots)
    cached = _RESOLVED_ROOTS.get(key)
    if cached is None:
        cached = _RESOLVED_ROOTS[key] = frozenset(root.resolve() for root in roots)
        if len(_RESOLVED_ROOTS) > 8:
            _RESOLVED_ROOTS.pop(next(iter(_RESOLVED_ROOTS)))
    return cached


_RESOLVED_ROOTS: dict[tuple[Path, ...], frozenset[Path]] = {}


def _inside(path: Path, resolved_roots: frozenset[Path]) -> bool:
    """Whether `path` (resolved) is one of the roots or under one: its folders looked up, not
    each root tested."""
    return path in resolved_roots or any(parent in resolved_roots for parent in path.parents)


def _import_root(path: Path) -> Path:
    """The folder absolute imports of `path` start from: the parent of its top-level package
    (the highest folder above it that still has an `__init__.py`), or its own folder."""
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return folder
    while (folder.parent / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder.parent
