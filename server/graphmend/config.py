"""`[tool.graphmend]` in pyproject.toml: which rules run, which files are skipped, which code counts
as compiled, and the sample inputs used for runtime confirmation.

```toml
[tool.graphmend]
select = ["GM"]            # codes or prefixes ("GM1" = the whole control-flow family); default: all
ignore = ["GM301"]         # the most specific entry wins, so ignore GM301 but select GM3 works
exclude = ["build/**"]     # glob patterns, relative to the pyproject.toml directory
compile-forward = true     # treat every nn.Module.forward as compiled (users compile whole models)
check-uncompiled = true    # also check functions on tensors nothing known compiles (info, "if compiled")
compiled = ["losses.py:focal_loss"]  # compiled elsewhere: "path glob:function|Class.method|Class"
dynamo-config = ["capture_scalar_outputs"]  # torch._dynamo.config flags your program sets to True

[tool.graphmend.samples]
"models/net.py:Net" = "models/net.py:make_sample"
```

Selection follows ruff: among the `select` and `ignore` entries that are a prefix of a code, the
longest wins; on a tie, `ignore` wins.
"""

from __future__ import annotations

import functools
import re
import threading
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .files import path_matches

CODE_PATTERN = re.compile(r"^(ALL|GM\d{0,3})$")
_KNOWN_KEYS = {"select", "ignore", "exclude", "compile-forward", "check-uncompiled", "compiled", "samples", "max-file-bytes", "dynamo-config"}
DYNAMO_FLAGS = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})


class ConfigError(ValueError):
    """A configuration value GraphMend cannot use; the message names the key and the file."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("GM",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    compile_forward: bool = True
    # functions on tensors that nothing known compiles are checked too, their findings marked
    # `if_compiled` (information, no fix): analysis/uncompiled.py
    check_uncompiled: bool = True
    samples: dict[str, str] = field(default_factory=dict)
    max_file_bytes: int = 4_000_000
    dynamo_flags: tuple[str, ...] = ()  # torch._dynamo.config flags the program sets (process-wide)
    root: Path | None = None  # directory of the pyproject.toml the settings came from
    # functions of this file called from compiled code in other files (found by the language
    # server with jedi): ("helper" or "Class.method", why it counts as compiled)
    extra_entries: tuple[tuple[str, str], ...] = ()
    # `path:Qualname` entries the user compiles somewhere GraphMend does not look (a training
    # script, a notebook): `losses.py:focal_loss`, `models/*.py:Decoder.step`, `sched.py:Euler`
    compiled: tuple[str, ...] = ()
    named_entries: tuple[tuple[str, str], ...] = ()  # compiled_in(path) of the file being analysed
    # walk only these entries (qualified names) where the file has them: a fixer's look-ahead asks
    # about one function of a variant of the file, and walking every other entry again cost most
    # of `check` on large files (rewrite/lookahead.py); all entries where none matches
    focus: tuple[str, ...] = ()
    # `check` marks fixable findings `[*]`: only whether a safe fix exists matters, not its text,
    # unless the output carries the fixes (SARIF); see FixContext.decide_only
    fix_texts: bool = field(default=True, compare=False, hash=False)
    # the names a file imports that its package binds to torch.compiler.disable (timm.layers
    # re-exporting `disable_compiler`) or to a query dynamo answers while tracing (kornia's
    # `is_compiling`), each with the torch function it stands for, from the file's path and
    # imports (imported_disables.py);
    # set by the language server and by check/fix, not part of the configuration's identity
    disable_resolver: Callable[[str, dict[str, str]], dict[str, str]] | None = field(default=None, compare=False, hash=False)

    def compiled_in(self, path: str) -> tuple[tuple[str, str], ...]:
        """The `compiled` entries (and the sample targets, which the user compiles to confirm them)
        naming functions, methods or classes of the file at `path`: (qualified name, why)."""
        return _named_in(path, self.compiled, tuple(self.samples), self.root)

    def is_enabled(self, code: str) -> bool:
        """Whether findings with `code` are reported (GM000, the parse failure, always is)."""
        if code == "GM000":
            return True
        return rule_selected(code, self.select, self.ignore)

    def with_overrides(
        self,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        extend_ignore: Iterable[str] | None = None,
        compile_forward: bool | None = None,
        check_uncompiled: bool | None = None,
    ) -> Config:
        """Command-line options replace (select, ignore) or extend (extend_ignore) the file's."""
        changes: dict[str, Any] = {}
        if select is not None:
            changes["select"] = _validate_codes(list(select), "--select")
        if ignore is not None:
            changes["ignore"] = _validate_codes(list(ignore), "--ignore")
        if extend_ignore:
            changes["ignore"] = tuple(changes.get("ignore", self.ignore)) + _validate_codes(
                list(extend_ignore), "--extend-ignore"
            )
        if compile_forward is not None:
            changes["compile_forward"] = compile_forward
        if check_uncompiled is not None:
            changes["check_uncompiled"] = check_uncompiled
        return replace(self, **changes)


def rule_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    best_select = max((_specificity(p, code) for p in select), default=-1)
    best_ignore = max((_specificity(p, code) for p in ignore), default=-1)
    if best_select < 0:
        return False
    return best_select > best_ignore


def _specificity(pattern: str, code: str) -> int:
    """Length of `pattern` when it selects `code`, else -1. "ALL" is the least specific match."""
    if pattern == "ALL":
        return 0
    return len(pattern) if code.startswith(pattern) else -1


def _validate_codes(values: Any, key: str, source: str = "") -> tuple[str, ...]:
    where = f" in {source}" if source else ""
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"`{key}`{where} must be a list of rule codes or prefixes, e.g. [\"GM1\", \"GM301\"]")
    cleaned = tuple(v.strip().upper() for v in values if v.strip())
    bad = [v for v in cleaned if not CODE_PATTERN.match(v)]
    if bad:
        raise ConfigError(
            f"`{key}`{where}: {', '.join(repr(b) for b in bad)} is not a rule code or prefix "
            "(expected GM followed by up to three digits, or ALL)"
        )
    return cleaned


def config_from_table(table: dict[str, Any], source: str = "", root: Path | None = None) -> Config:
    """Build a Config from the `[tool.graphmend]` table; unknown keys and bad values raise."""
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in "
            f"[tool.graphmend]{' of ' + source if source else ''}; known keys: {', '.join(sorted(_KNOWN_KEYS))}"
        )
    config = Config(root=root)
    changes: dict[str, Any] = {}
    if "select" in table:
        changes["select"] = _validate_codes(table["select"], "select", source)
    if "ignore" in table:
        changes["ignore"] = _validate_codes(table["ignore"], "ignore", source)
    if "exclude" in table:
        exclude = table["exclude"]
        if not isinstance(exclude, list) or not all(isinstance(e, str) for e in exclude):
            raise ConfigError(f"`exclude` in {source or '[tool.graphmend]'} must be a list of glob patterns")
        changes["exclude"] = tuple(exclude)
    for key in ("compile-forward", "check-uncompiled"):
        if key in table:
            value = table[key]
            if not isinstance(value, bool):
                raise ConfigError(f"`{key}` in {source or '[tool.graphmend]'} must be true or false")
            changes[key.replace("-", "_")] = value
    if "compiled" in table:
        compiled = table["compiled"]
        if not isinstance(compiled, list) or not all(isinstance(c, str) and ":" in c.strip(":") for c in compiled):
            raise ConfigError(
                f"`compiled` in {source or '[tool.graphmend]'} must be a list of \"path.py:Name\" entries "
                "(a function, `Class.method` or a class, in files matching the path glob)"
            )
        changes["compiled"] = tuple(compiled)
    if "max-file-bytes" in table:
        value = table["max-file-bytes"]
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"`max-file-bytes` in {source or '[tool.graphmend]'} must be a positive integer")
        changes["max_file_bytes"] = value
    if "dynamo-config" in table:
        flags = table["dynamo-config"]
        if not isinstance(flags, list) or not all(isinstance(f, str) and f in DYNAMO_FLAGS for f in flags):
            raise ConfigError(
                f"`dynamo-config` in {source or '[tool.graphmend]'} must list flags among "
                f"{', '.join(sorted(DYNAMO_FLAGS))}"
            )
        changes["dynamo_flags"] = tuple(flags)
    if "samples" in table:
        samples = table["samples"]
        if not isinstance(samples, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in samples.items()
        ):
            raise ConfigError(
                f"[tool.graphmend.samples] in {source or 'pyproject.toml'} must map "
                "\"path.py:Target\" to \"path.py:factory\" strings"
            )
        changes["samples"] = dict(samples)
    return replace(config, **changes)


def load_config(path: Path) -> Config:
    """Read `[tool.graphmend]` from `path` (a pyproject.toml); raise ConfigError when it is invalid."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    table = data.get("tool", {}).get("graphmend", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.graphmend] in {path} must be a table")
    return config_from_table(table, str(path), root=path.parent)


class ConfigResolver:
    """The one search for the configuration that applies to a file: the nearest pyproject.toml at or
    above it that has a [tool.graphmend] table (one whose TOML is broken, or that has no table, is
    skipped, as ruff does), else the defaults. The CLI, `explain` and the server all ask it. Each
    pyproject.toml is parsed once and re-read when it changes on disk (its mtime), so editing the
    project's configuration takes effect in the editor without a restart."""

    def __init__(self) -> None:
        self._parsed: dict[Path, tuple[int, Config | None, str | None]] = {}  # path -> (mtime, config, error)
        self._lock = threading.Lock()
        self._defaults = Config()  # one object for every file without a table: callers key on it

    def lookup(self, path: Path | None) -> tuple[Config, str | None]:
        """The configuration for `path` (a file, or a directory's own) and the error that made it
        fall back to the defaults, if any."""
        if path is None:
            return self._defaults, None
        path = path.absolute()
        directory = path if path.is_dir() else path.parent
        for folder in [directory, *directory.parents]:
            candidate = folder / "pyproject.toml"
            try:
                mtime = candidate.stat().st_mtime_ns
            except OSError:
                continue
            config, error = self._load(candidate, mtime)
            if config is not None or error is not None:
                return (config or self._defaults), error
        return self._defaults, None

    def require(self, path: Path) -> Config:
        """`lookup`, for callers that stop on an invalid configuration (the command line)."""
        config, error = self.lookup(path)
        if error is not None:
            raise ConfigError(error)
        return config

    def _load(self, path: Path, mtime: int) -> tuple[Config | None, str | None]:
        with self._lock:
            cached = self._parsed.get(path)
            if cached is not None and cached[0] == mtime:
                return cached[1], cached[2]
        config: Config | None = None
        error: str | None = None
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            if isinstance(data.get("tool"), dict) and "graphmend" in data["tool"]:
                config = load_config(path)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            pass  # not ours to judge: a broken pyproject without our table is skipped
        except ConfigError as exc:
            error = str(exc)
        with self._lock:
            self._parsed[path] = (mtime, config, error)
        return config, error


@functools.lru_cache(maxsize=1024)  # asked on every analysis (each keystroke): no path resolving each time
def _named_in(path: str, compiled: tuple[str, ...], targets: tuple[str, ...], root: Path | None) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    for entry, why in [*((e, "`compiled` in [tool.graphmend]") for e in compiled), *((t, "a sample target in [tool.graphmend.samples]") for t in targets)]:
        pattern, _, qualified = entry.rpartition(":")
        if pattern and qualified and path_matches(Path(path), (pattern,), root):
            found.append((qualified, f"`{qualified}`, named as compiled by {why}"))
    return tuple(found)
