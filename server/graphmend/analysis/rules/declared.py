"""Rules that are only data, built from catalogue.toml.

Most rules need code to decide whether a node breaks. Many do not: a call-table rule flags calls to
a list of functions (its `[GMxxx.calls]`), and a `[GMxxx.match]` table names a matcher and the
hooks it listens to (`kind = "tensor-op"`, `methods = ["item"]`). Declaring those in the catalogue,
next to their words, keeps one place to read and extend such a rule; their examples are in
examples/<code>.toml like every rule's. The registry (`__init__.py`) adds them to the written ones.
"""

from __future__ import annotations

from .base import CallTableRule, Effect, Rule, TensorOpRule
from .catalogue import RuleWords, catalogue
from .control_flow import TensorTruthRule
from .dynamic_shapes import ShapeOpRule

# `kind` in a [GMxxx.match] table -> the matcher class the declared rule specialises.
MATCHERS: dict[str, type[Rule]] = {
    "tensor-op": TensorOpRule,
    "shape-op": ShapeOpRule,
    "tensor-truth": TensorTruthRule,
}
_HOOK_SETS = ("qualnames", "methods", "truth_constructs")


def _class_name(words: RuleWords) -> str:
    """`tensor-if` -> `TensorIf`: the name a written class would have had (shown in reprs)."""
    return "".join(part.capitalize() for part in words.name.split("-"))


def _attributes(code: str, words: RuleWords) -> tuple[type[Rule], dict[str, object]]:
    """The base class and class attributes `code`'s catalogue entry declares."""
    attributes: dict[str, object] = {"code": code, "__module__": __name__}
    if words.calls:
        return CallTableRule, attributes
    match = dict(words.match)
    kind = match.pop("kind", None)
    if kind not in MATCHERS:
        raise ValueError(f"{code}: [match] kind must be one of {sorted(MATCHERS)}, not {kind!r}")
    for hook in _HOOK_SETS:
        if hook in match:
            names = match.pop(hook)
            if not isinstance(names, list):
                raise ValueError(f"{code}: [match] {hook} must be a list of names")
            attributes[hook] = frozenset(names)
    if "removed_by_flag" in match:
        attributes["removed_by_flag"] = match.pop("removed_by_flag")
    if "effect" in match:
        attributes["effect"] = Effect(match.pop("effect"))
    if match:
        raise ValueError(f"{code}: unknown [match] keys {sorted(match)}")
    return MATCHERS[kind], attributes


def declared_rules(written: set[str]) -> list[type[Rule]]:
    """A class for every catalogue entry that declares its matching and is not written as a class."""
    rules: list[type[Rule]] = []
    for code, words in catalogue().items():
        if code in written or not (words.calls or words.match):
            continue
        base, attributes = _attributes(code, words)
        rules.append(type(_class_name(words), (base,), attributes))
    return rules
