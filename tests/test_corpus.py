"""The analyser and real TorchDynamo agree on every corpus case and every rule example.

Cases: tests/corpus/*.py (one per pattern, trap and non-break), the `breaks`/`ok` examples each
rule carries, and one generated case per row of each call table. See tests/ground_truth.py for
the file format and what "agree" means.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from graphmend.analysis.rules import ALL_RULES
from graphmend.analysis.rules.catalogue import example_files

from .ground_truth import disagreements

CORPUS = Path(__file__).parent / "corpus"


def _cases() -> list:
    cases = [pytest.param(path.read_text(encoding="utf-8"), path.name, id=f"corpus/{path.name}") for path in sorted(CORPUS.glob("*.py"))]
    for rule in ALL_RULES:
        breaks, ok = rule.all_examples()
        for kind, examples in (("breaks", breaks), ("ok", ok)):
            for number, example in enumerate(examples):
                name = f"{rule.code}_{kind}_{number}.py"
                cases.append(pytest.param(example.source, name, id=f"{rule.code}/{rule.name}/{kind}-{number}"))
    return cases


@pytest.mark.parametrize("source, name", _cases())
def test_analyser_agrees_with_dynamo(source: str, name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    problems = disagreements(path, source)
    assert not problems, "\n".join(problems)


def test_every_rule_has_examples_that_break() -> None:
    missing = [rule.code for rule in ALL_RULES if not rule.all_examples()[0]]
    assert not missing, f"rules without a breaking example: {missing}"


def test_every_rule_has_examples_that_do_not_break() -> None:
    missing = [rule.code for rule in ALL_RULES if not rule.all_examples()[1]]
    assert not missing, f"rules without a non-breaking example: {missing}"


def test_every_examples_file_belongs_to_a_rule() -> None:
    """A misnamed examples file would be read by no rule, and its examples never run."""
    codes = {rule.code for rule in ALL_RULES}
    orphans = [path.name for path in example_files() if path.stem not in codes]
    assert not orphans, f"examples files for codes no rule has: {orphans}"
