"""Generated documentation and data stay in sync with the code."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rule_documentation_is_current() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rule_docs.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_rule_is_in_the_readme_table() -> None:
    from graphmend.analysis.rules import ALL_RULES

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [rule.code for rule in ALL_RULES if rule.code not in readme]
    assert not missing, f"README rule table lacks {missing}"


def test_dynamo_break_ids_name_the_registrys_types() -> None:
    """The hover's GB ids and titles are torch's own (its registry), for every rule but GM000."""
    import json

    import torch
    from graphmend.analysis.rules import ALL_RULES
    from graphmend.analysis.rules.dynamo_ids import GRAPH_BREAK_TYPES, RULE_GB_IDS

    registry = json.loads((Path(torch.__file__).parent / "_dynamo" / "graph_break_registry.json").read_text(encoding="utf-8"))
    assert {gb: registry[gb][0]["Gb_type"] for gb in GRAPH_BREAK_TYPES} == GRAPH_BREAK_TYPES
    assert {gb for ids in RULE_GB_IDS.values() for gb in ids} <= set(GRAPH_BREAK_TYPES)
    breaking = {rule.code for rule in ALL_RULES if rule.all_examples()[0] and rule.code != "GM000"}
    assert set(RULE_GB_IDS) <= breaking


def test_the_catalogue_has_one_entry_per_rule() -> None:
    """catalogue.toml holds every rule's words and nothing else: a stale or misspelt code would
    otherwise sit there unread, and a rule without words fails at import with its code named."""
    from graphmend.analysis.rules import ALL_RULES
    from graphmend.analysis.rules.base import CallTableRule
    from graphmend.analysis.rules.catalogue import catalogue

    entries = catalogue()
    assert set(entries) == {rule.code for rule in ALL_RULES}
    with_calls = {code for code, words in entries.items() if words.calls}
    # GM514's table lists context managers: read by the rule itself, since only `with` enters them
    assert with_calls == {rule.code for rule in ALL_RULES if isinstance(rule, CallTableRule)} | {"GM514"}
    assert all(words.message and words.why and words.fix for words in entries.values())
