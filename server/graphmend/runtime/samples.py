"""Which sample input confirms which compiled code: `[tool.graphmend.samples]` in pyproject.toml.

```toml
[tool.graphmend.samples]
"models/net.py:Net" = "models/net.py:make_sample"
```

The key names the compiled code (a class, function or `Class.method`), the value a factory that
returns `(callable, args, kwargs)`; both paths are relative to the pyproject.toml directory. User
code needs no graphmend import: the factory is plain Python run by `runtime/worker.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ..config import Config


class SampleError(ValueError):
    """A sample specification GraphMend cannot use; the message says what to write instead."""


@dataclass(frozen=True)
class Spec:
    """`path.py:Name`, with the path made absolute."""

    path: Path
    name: str

    @property
    def text(self) -> str:
        return f"{self.path}:{self.name}"


@dataclass(frozen=True)
class Sample:
    target: Spec
    factory: Spec
    root: Path  # the directory the worker runs in and whose files count as the user's code
    label: str  # the target as the user wrote it, for messages

    def key(self) -> str:
        return self.target.text


def parse_spec(spec: str, base: Path) -> Spec:
    """`path.py:Name` relative to `base` (or absolute) -> Spec; SampleError if malformed."""
    path, colon, name = spec.strip().rpartition(":")
    if not colon or not path or not name or not path.endswith(".py"):
        raise SampleError(f"{spec!r} is not of the form path/to/file.py:Name")
    if not all(part.isidentifier() for part in name.split(".")):
        raise SampleError(f"{spec!r}: {name!r} is not a Python name")
    resolved = Path(path)
    if not resolved.is_absolute():
        resolved = base / resolved
    return Spec(resolved.resolve(), name)


def _entries(config: Config) -> list[Sample | SampleError]:
    """Each `[tool.graphmend.samples]` entry as a Sample, or the error that makes it unusable."""
    base = (config.root or Path.cwd()).resolve()
    entries: list[Sample | SampleError] = []
    for target, factory in config.samples.items():
        try:
            entries.append(Sample(parse_spec(target, base), parse_spec(factory, base), base, target))
        except SampleError as exc:
            entries.append(exc)
    return entries


def configured_samples(config: Config) -> list[Sample]:
    """Every sample of a configuration; a malformed entry raises SampleError naming it."""
    entries = _entries(config)
    for entry in entries:
        if isinstance(entry, SampleError):
            raise entry
    return [entry for entry in entries if isinstance(entry, Sample)]


def find_sample(target: str, config: Config, cwd: Path, factory: str | None = None) -> Sample:
    """The sample for `target` (written relative to `cwd`): `factory` when given, else the one
    configured for it. SampleError says how to configure one when there is none."""
    spec = parse_spec(target, cwd)
    root = (config.root or cwd).resolve()
    if factory is not None:
        return Sample(spec, parse_spec(factory, cwd), root, target)
    for sample in configured_samples(config):
        if sample.target == spec:
            return sample
    where = f"{config.root / 'pyproject.toml'}" if config.root else "pyproject.toml"
    try:
        relative = spec.path.relative_to(root)
    except ValueError:
        relative = spec.path
    raise SampleError(
        f"no sample input for {target}: pass --sample path.py:factory, or add to [tool.graphmend.samples] in {where}:\n"
        f'  "{relative}:{spec.name}" = "{relative}:make_sample"   # make_sample() returns (callable, args, kwargs)'
    )


def samples_for_file(config: Config, path: Path) -> list[Sample]:
    """The samples whose target is defined in `path` (malformed entries are left out)."""
    resolved = path.resolve()
    return [entry for entry in _entries(config) if isinstance(entry, Sample) and entry.target.path == resolved]


def definition_line(tree: ast.Module, name: str) -> int | None:
    """The 1-based line of the `def`/`class` that `Name` or `Class.method` names at module level."""
    body: list[ast.stmt] = tree.body
    found: ast.stmt | None = None
    for part in name.split("."):
        found = next(
            (node for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part),
            None,
        )
        if found is None:
            return None
        body = found.body if isinstance(found, ast.ClassDef) else []
    return found.lineno if found is not None else None
