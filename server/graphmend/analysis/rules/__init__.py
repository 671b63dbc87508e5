"""The rule registry: every rule, and the dispatch tables the walker uses for a given selection.

Dispatch is by hook so that the walker does a dictionary lookup per node instead of asking every
rule: node type, qualified call target, method name, truth-test construct, statement type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType

from . import control_flow, conversions, dynamic_shapes, side_effects, untraceable
from .base import CallTableRule, Effect, Example, Rule, RuleContext
from .declared import declared_rules


def _rules_in(module: ModuleType) -> list[type[Rule]]:
    """The rules a module defines (a class with a `code`), in the order it defines them: a rule is
    registered by being written, so none can be written and forgotten."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Rule) and "code" in value.__dict__ and value.__module__ == module.__name__
    ]


_WRITTEN: list[type[Rule]] = [
    rule for module in (control_flow, conversions, side_effects, dynamic_shapes, untraceable) for rule in _rules_in(module)
]
# Written rules and those declared in catalogue.toml, in code order (the order docs list them in).
_RULE_CLASSES: tuple[type[Rule], ...] = tuple(
    sorted(_WRITTEN + declared_rules({rule.code for rule in _WRITTEN}), key=lambda rule: rule.code)
)

ALL_RULES: tuple[Rule, ...] = tuple(cls() for cls in _RULE_CLASSES)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
assert len(RULES_BY_CODE) == len(ALL_RULES), "duplicate rule codes"

# Codes that are not rules: the file could not be parsed / the analyser itself failed.
PARSE_ERROR_CODE = "GM000"
INTERNAL_ERROR_CODE = "GM001"


@dataclass
class RuleSet:
    """The enabled rules, indexed by the hook that triggers them."""

    by_type: dict[type, tuple[Rule, ...]] = field(default_factory=dict)
    by_qualname: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    by_method: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    by_truth: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    by_statement: dict[type, tuple[Rule, ...]] = field(default_factory=dict)
    by_store_type: dict[type, tuple[Rule, ...]] = field(default_factory=dict)
    by_callee_kind: dict[object, tuple[Rule, ...]] = field(default_factory=dict)
    by_root: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    by_code: dict[str, Rule] = field(default_factory=dict)  # rules the walker reports on its own

    @property
    def has_call_rules(self) -> bool:
        return bool(self.by_qualname or self.by_method or self.by_callee_kind or self.by_root)


# Which of a rule's hooks fills which dispatch table.
_HOOK_TABLES = (
    ("node_types", "by_type"),
    ("qualnames", "by_qualname"),
    ("methods", "by_method"),
    ("truth_constructs", "by_truth"),
    ("statement_types", "by_statement"),
    ("store_types", "by_store_type"),
    ("callee_kinds", "by_callee_kind"),
    ("qualname_roots", "by_root"),
)


@lru_cache(maxsize=64)
def ruleset(codes: frozenset[str]) -> RuleSet:
    """Dispatch tables for the rules whose codes are in `codes`."""
    result = RuleSet()
    for rule in ALL_RULES:
        if rule.code not in codes:
            continue
        result.by_code[rule.code] = rule
        for hook, table_name in _HOOK_TABLES:
            table: dict = getattr(result, table_name)
            for key in getattr(rule, hook):
                table[key] = table.get(key, ()) + (rule,)
    return result


__all__ = [
    "ALL_RULES",
    "INTERNAL_ERROR_CODE",
    "PARSE_ERROR_CODE",
    "RULES_BY_CODE",
    "CallTableRule",
    "Effect",
    "Example",
    "Rule",
    "RuleContext",
    "RuleSet",
    "ruleset",
]
