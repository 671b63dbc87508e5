"""The language server's settings: typed, with defaults, validated one by one.

They arrive as `initializationOptions` and in `workspace/didChangeConfiguration` (or from
`workspace/configuration` when the client sends none), under a `graphmend` section or flat. A value
of the wrong type or range is reported (the server shows the messages with `window/showMessage`)
and replaced by its default; unknown keys are reported too, so a typo does not silently do nothing.
Rule selection and the rest of `[tool.graphmend]` stay in pyproject.toml; `select`/`ignore` here
override it for the editor only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from ..config import ConfigError, _validate_codes
from ..rewrite.model import Safety

DIAGNOSTIC_MODES = ("auto", "push", "pull")
CONFIRM_DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Settings:
    # "auto": pull diagnostics when the client supports them, push otherwise (never both: VS Code
    # would list every problem twice)
    diagnostic_mode: str = "auto"
    # quiet time after the last keystroke before a document is analysed again
    debounce_ms: int = 50
    # glob patterns (relative to a workspace folder) the workspace commands skip, on top of .gitignore
    exclude: tuple[str, ...] = ()
    # override [tool.graphmend]'s rule selection in the editor (None: keep the file's)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    # treat every nn.Module.forward as compiled (None: keep the file's `compile-forward`)
    compile_forward: bool | None = None
    # also check functions on tensors nothing known compiles, at information severity (None: keep
    # the file's `check-uncompiled`)
    check_uncompiled: bool | None = None
    # follow calls from compiled code into other workspace files (jedi)
    cross_file: bool = True
    # the riskiest rewrites offered as quick fixes, one at a time: costly ones (same values, more
    # compute) and unsafe ones (behaviour changes) are titled so; fix-all and the workspace command
    # apply safe ones only
    quick_fix_level: Safety = Safety.UNSAFE
    # base of the rule documentation links (`#gm101-tensor-if` is appended); "" for the bundled docs
    docs_url: str = ""
    # parallel worker processes for the workspace commands (0: one per CPU)
    jobs: int = 0
    # runtime confirmation: the interpreter that runs the user's code ("" = the server's own), the
    # seconds before a run is stopped, and the device a factory taking `device` is given
    confirm_python: str = ""
    confirm_timeout_s: int = 300
    confirm_device: str = "auto"

    def with_changes(self, **changes: Any) -> Settings:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Settings(**values)


# settings key (camelCase, as editors write them) -> (field, validator returning the value or raising)
def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(repr(o) for o in options)}")
        return value

    return check


def _fix_level(value: Any) -> Safety:
    return Safety(_choice(tuple(s.value for s in Safety))(value))


# how a decline tells the editor user to allow the riskier fix it names ({level}: its tier)
QUICK_FIX_LEVEL_HINT = 'allow it with the `quickFixLevel` setting ("{level}")'


def _whole_number(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"must be a whole number from {low} to {high}")
        return value

    return check


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _optional_boolean(value: Any) -> bool | None:
    return None if value is None else _boolean(value)


def _globs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of glob patterns")
    return tuple(value)


def _codes(name: str) -> Callable[[Any], tuple[str, ...] | None]:
    def check(value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        try:
            return _validate_codes(value, name)
        except ConfigError as exc:
            raise ValueError(str(exc).split(": ", 1)[-1]) from exc

    return check


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "diagnosticMode": ("diagnostic_mode", _choice(DIAGNOSTIC_MODES)),
    "debounceMs": ("debounce_ms", _whole_number(0, 5000)),
    "exclude": ("exclude", _globs),
    "select": ("select", _codes("select")),
    "ignore": ("ignore", _codes("ignore")),
    "compileForward": ("compile_forward", _optional_boolean),
    "checkUncompiled": ("check_uncompiled", _optional_boolean),
    "crossFile": ("cross_file", _boolean),
    "quickFixLevel": ("quick_fix_level", _fix_level),
    "docsUrl": ("docs_url", _string),
    "jobs": ("jobs", _whole_number(0, 256)),
    "confirmPython": ("confirm_python", _string),
    "confirmTimeoutS": ("confirm_timeout_s", _whole_number(1, 86_400)),
    "confirmDevice": ("confirm_device", _choice(CONFIRM_DEVICES)),
}


# Keys editors keep in the same section for themselves (the VS Code extension's interpreter and
# LSP trace level): not the server's business, never reported.
_CLIENT_KEYS = frozenset({"python", "trace"})


@dataclass
class ParsedSettings:
    settings: Settings
    problems: list[str] = field(default_factory=list)  # one sentence per rejected key or value


def parse_editor_settings(raw: Any, base: Settings | None = None) -> ParsedSettings:
    """Settings from a client's JSON object. `{"graphmend": {...}}` and the flat form both work;
    keys missing from `raw` keep their value in `base` (or the default)."""
    base = base or Settings()
    if raw is None:
        return ParsedSettings(base)
    if isinstance(raw, dict) and isinstance(raw.get("graphmend"), dict):
        raw = raw["graphmend"]
    if not isinstance(raw, dict):
        return ParsedSettings(base, [f"GraphMend settings must be an object, got {type(raw).__name__}; using the defaults"])
    changes: dict[str, Any] = {}
    problems: list[str] = []
    defaults = Settings()
    for key, value in raw.items():
        known = _KEYS.get(key)
        if known is None:
            if key not in _CLIENT_KEYS:
                problems.append(f"GraphMend: unknown setting `{key}` (known: {', '.join(sorted(_KEYS))}); ignored")
            continue
        name, check = known
        try:
            changes[name] = check(value)
        except ValueError as exc:
            default = getattr(defaults, name)
            problems.append(f"GraphMend: setting `{key}` {exc}; using the default ({_show(default)})")
            changes[name] = default
    return ParsedSettings(base.with_changes(**changes), problems)


def _show(value: Any) -> str:
    if value is None:
        return "the pyproject.toml value"
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return repr(value)
