"""The rules' data: words, dynamo ids and declared matching (catalogue.toml), examples (examples/).

What a user reads about a rule (its name, the message, why dynamo breaks, what to do) and the ids
of the graph breaks dynamo logs for it live in one data file, apart from the code that matches the
pattern (as pyright keeps its messages apart from its checker): the texts can be reviewed and
reworded without touching a rule, and rules that share an explanation say it once (`[shared]`).
A call-table rule's table (the functions it flags) is data too, and lives there with its words.

Each rule's examples are data as well, one file per rule (examples/<code>.toml): complete modules
that the corpus test runs through the analyser and through real dynamo. Kept out of the rule
classes, the matching logic reads on its own, and a reviewer finds a rule's evidence by its code.
"""

from __future__ import annotations

import string
import textwrap
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

_CATALOGUE = Path(__file__).with_name("catalogue.toml")
_EXAMPLES = Path(__file__).with_name("examples")


@dataclass(frozen=True)
class Example:
    """A complete module; lines marked `# expect: GMxxx` are where dynamo breaks."""

    code: str
    note: str = ""

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")


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
    # Calls in `calls` that dynamo traces when they are given an output size: qualified name -> the
    # position of the `size` argument (`[GMxxx.traced_when_sized]`). NumPy's `random.rand(4)` is
    # traced by torch._numpy (an array out); `random.rand()` returns a Python float and breaks.
    traced_when_sized: Mapping[str, int]
    # A rule that is only data: which matcher (`kind`) and its hooks (`[GMxxx.match]`); empty for a
    # rule written as a class. declared.py builds these.
    match: Mapping[str, object]


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
            traced_when_sized=MappingProxyType(entry.get("traced_when_sized", {})),
            match=MappingProxyType(entry.get("match", {})),
        )
        for code, entry in data.items()
    }


def words_for(code: str) -> RuleWords:
    """The catalogue's entry for `code`; a rule without one is a programming error, said plainly."""
    try:
        return catalogue()[code]
    except KeyError:
        raise LookupError(f"rule {code} has no entry in {_CATALOGUE.name}") from None


def example_files() -> list[Path]:
    """Every rule's examples file (a file for a code no rule has is a mistake the tests report)."""
    return sorted(_EXAMPLES.glob("*.toml"))


def examples_for(code: str) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
    """`code`'s examples as (breaks, ok); none when the rule has no examples file (the corpus
    test requires both kinds for every rule)."""
    path = _EXAMPLES / f"{code}.toml"
    if not path.exists():
        return (), ()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    # A misspelt table or key would silently drop an example that the corpus test then never runs.
    entry_keys = {key for kind in ("breaks", "ok") for entry in data.get(kind, ()) for key in entry}
    unknown = (set(data) - {"breaks", "ok"}) | (entry_keys - {"code", "note"})
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {sorted(unknown)} (examples have `code` and `note`, under `breaks` or `ok`)")

    def read(kind: str) -> tuple[Example, ...]:
        return tuple(Example(entry["code"], entry.get("note", "")) for entry in data.get(kind, ()))

    return read("breaks"), read("ok")
