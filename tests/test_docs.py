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
