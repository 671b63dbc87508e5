"""The rule registry: every rule, and the dispatch tables the walker uses for a given selection.

Dispatch is by hook so that the walker does a dictionary lookup per node instead of asking every
rule: node type, qualified call target, method name, truth-test construct, statement type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from . import control_flow, conversions, dynamic_shapes, side_effects, untraceable
from .base import CallTableRule, Effect, Example, Rule, RuleContext

_RULE_CLASSES: tuple[type[Rule], ...] = (
    *control_flow.RULES,
    *conversions.RULES,
    *side_effects.RULES,
    *dynamic_shapes.RULES,
    *untraceable.RULES,
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
    by_callee_kind: dict[object, tuple[Rule, ...]] = field(default_factory=dict)
    by_root: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    by_code: dict[str, Rule] = field(default_factory=dict)  # rules the walker reports on its own

    @property
    def has_call_rules(self) -> bool:
        return bool(self.by_qualname or self.by_method or self.by_callee_kind or self.by_root)


def _add(table: dict, key: object, rule: Rule) -> None:
    table[key] = table.get(key, ()) + (rule,)


@lru_cache(maxsize=64)
def ruleset(codes: frozenset[str]) -> RuleSet:
    """Dispatch tables for the rules whose codes are in `codes`."""
    result = RuleSet()
    for rule in ALL_RULES:
        if rule.code not in codes:
            continue
        result.by_code[rule.code] = rule
        for node_type in rule.node_types:
            _add(result.by_type, node_type, rule)
        for name in rule.qualnames:
            _add(result.by_qualname, name, rule)
        for method in rule.methods:
            _add(result.by_method, method, rule)
        for construct in rule.truth_constructs:
            _add(result.by_truth, construct, rule)
        for statement in rule.statement_types:
            _add(result.by_statement, statement, rule)
        for kind in rule.callee_kinds:
            _add(result.by_callee_kind, kind, rule)
        for root in rule.qualname_roots:
            _add(result.by_root, root, rule)
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
