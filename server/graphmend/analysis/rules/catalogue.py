"""The rules' words, dynamo ids and call tables, read from catalogue.toml.

What a user reads about a rule (its name, the message, why dynamo breaks, what to do) and the ids
of the graph breaks dynamo logs for it live in one data file, apart from the code that matches the
pattern (as pyright keeps its messages apart from its checker): the texts can be reviewed and
reworded without touching a rule, and rules that share an explanation say it once (`[shared]`).
A call-table rule's table (the functions it flags) is data too, and lives there with its words.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

_CATALOGUE = Path(__file__).with_name("catalogue.toml")


@dataclass(frozen=True)
class RuleWords:
    name: str
    message: str  # a template: {subject} is the source of the node, other fields come from the rule
    why: str
    fix: str
    graph_breaks: tuple[str, ...]  # dynamo's GBxxxx ids for this rule's breaks
    # A call-table rule's calls: qualified name -> an example call (each one checked against dynamo
    # by the corpus test), and the modules those examples import.
    calls: Mapping[str, str]
    example_imports: tuple[str, ...]


@cache
def catalogue() -> dict[str, RuleWords]:
    """Every rule code's words, with `${shared}` references filled in."""
    data = tomllib.loads(_CATALOGUE.read_text(encoding="utf-8"))
    shared = data.pop("shared", {})

    def filled(text: str) -> str:
        return string.Template(text).substitute(shared)

    return {
        code: RuleWords(
            name=entry["name"],
            message=filled(entry["message"]),
            why=filled(entry["why"]),
            fix=filled(entry["fix"]),
            graph_breaks=tuple(entry["graph_breaks"]),
            calls=MappingProxyType(entry.get("calls", {})),
            example_imports=tuple(entry.get("example_imports", ())),
        )
        for code, entry in data.items()
    }


def words_for(code: str) -> RuleWords:
    """The catalogue's entry for `code`; a rule without one is a programming error, said plainly."""
    try:
        return catalogue()[code]
    except KeyError:
        raise LookupError(f"rule {code} has no entry in {_CATALOGUE.name}") from None
