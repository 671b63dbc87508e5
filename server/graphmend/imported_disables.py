"""Names a file imports from its own package that are bound to `torch.compiler.disable` there,
or to a query dynamo answers while tracing (kornia's `is_compiling` wrapper of
`torch.compiler.is_compiling`, in `kornia/core/utils.py`).

timm binds `disable_compiler = getattr(torch.compiler, "disable", None) or nullwrap` in
`layers/_fx.py`, re-exports it from `layers/__init__.py`, and decorates model methods with it in
`models/naflexvit.py`. The analyser works on one file, so it asks here (`Config.disable_resolver`,
set by the language server and by `check`/`fix` unless --no-cross-module), for the imports of that
file: each import that resolves inside the file's package is followed to the module that binds
it, through re-exports, by reading and parsing those modules (never running them), cached by
their size and modification time. Module names come from the package layout (directories with
`__init__.py`).
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from .analysis.symbols import build_index

MAX_RE_EXPORTS = 4  # `pkg/__init__.py` -> `pkg/layers/__init__.py` -> `pkg/layers/_fx.py` is 2
MAX_MODULE_BYTES = 2_000_000


class ImportedDisables:
    """A cache of what each module of a package binds and imports, keyed by file."""

    def __init__(self) -> None:
        self._modules: dict[Path, tuple[tuple[int, int], dict[str, str], dict[str, str]]] = {}
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[object, tuple[()]]:
        # Sent to a worker process with every file's configuration: it becomes that process's one
        # cache, not a new empty one per file (which parsed `modeling_utils.py` and `utils/` again
        # for each of transformers' 1,957 model files: 15 s of a 40 s check).
        return (_worker_cache, ())

    def names_for(self, path: str | Path, imports: dict[str, str]) -> dict[str, str]:
        """The local names among `imports` (local name -> imported dotted name, relative ones
        starting with ".") of the file at `path` that its package binds to torch.compiler.disable
        or to a query dynamo answers while tracing, each with the torch function it stands for."""
        file = Path(path)
        if not file.is_file():
            return {}
        here = module_name(file)
        if not here:
            return {}  # not inside a package: its imports cannot be placed
        top = here.split(".")[0]
        root = _package_root(file, here)
        found = {}
        for local, target in sorted(imports.items()):
            absolute = absolute_import(target, here, file.name == "__init__.py")
            bound = self._binding(root, absolute, 0) if absolute.split(".")[0] == top else None
            if bound is not None:
                found[local] = bound
        return found

    def _binding(self, root: Path, dotted: str, depth: int) -> str | None:
        module, _, name = dotted.rpartition(".")
        if not module or depth > MAX_RE_EXPORTS:
            return None
        file = _module_file(root, module)
        if file is None:
            return None
        facts = self._facts(file)
        if facts is None:
            return None
        imports, bindings = facts
        if name in bindings:
            return bindings[name]
        if name in imports:
            return self._binding(root, absolute_import(imports[name], module, file.name == "__init__.py"), depth + 1)
        return None

    def _facts(self, file: Path) -> tuple[dict[str, str], dict[str, str]] | None:
        """The module's imports and its names bound to torch.compiler.disable or to a query, with
        the torch function each stands for (None: unreadable)."""
        try:
            stat = file.stat()
        except OSError:
            return None
        stamp = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._modules.get(file)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        if stat.st_size > MAX_MODULE_BYTES:
            return None
        try:
            tree = ast.parse(file.read_bytes())
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        index = build_index(tree)
        bindings = {name: "torch.compiler.disable" for name in index.disable_aliases} | index.query_wrappers
        facts = (dict(index.imports), bindings)
        with self._lock:
            self._modules[file] = (stamp, *facts)
        return facts


_WORKER_CACHE: list[ImportedDisables] = []


def _worker_cache() -> ImportedDisables:
    """The cache of this process, for the configurations sent to it (see __reduce__)."""
    if not _WORKER_CACHE:
        _WORKER_CACHE.append(ImportedDisables())
    return _WORKER_CACHE[0]


def _package_root(file: Path, dotted: str) -> Path:
    """The directory that holds the outermost package of `file` (`dotted` is its module name)."""
    packages = dotted.count(".") + (1 if file.name == "__init__.py" else 0)  # package folders above the file
    folder = file.resolve().parent
    for _ in range(packages):
        folder = folder.parent
    return folder


def _module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path) -> str:
    """`pkg/sub/mod.py` -> "pkg.sub.mod" (`__init__.py` -> "pkg.sub"), up to the outermost package."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def absolute_import(target: str, module: str, is_package: bool) -> str:
    """A relative import target made absolute from the importing module's dotted name."""
    if not target.startswith("."):
        return target
    level = len(target) - len(target.lstrip("."))
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    rest = target.lstrip(".")
    return ".".join([*base, rest]) if rest else ".".join(base)
