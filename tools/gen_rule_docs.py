"""Write docs/rules.md from the rule classes, so the documentation cannot drift from the code.

    .venv/bin/python tools/gen_rule_docs.py          # rewrite docs/rules.md
    .venv/bin/python tools/gen_rule_docs.py --check  # exit 1 if it is out of date (run by the tests)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from graphmend.analysis.rules import ALL_RULES, CallTableRule, Rule  # noqa: E402

OUT = ROOT / "docs" / "rules.md"
# the same text inside the package, so an installed server (the VS Code extension's) links to it
PACKAGED = ROOT / "server" / "graphmend" / "rules.md"
_FAMILIES = {
    "GM1": "Data-dependent control flow",
    "GM2": "Tensor values turned into Python objects",
    "GM3": "Side effects and I/O",
    "GM4": "Data-dependent output shapes",
    "GM5": "Constructs dynamo cannot trace",
}
_EFFECTS = {
    "break": "the graph is split here",
    "rest-eager": "dynamo cannot resume: the rest of the function runs eagerly",
    "frame-skip": "dynamo runs the whole function eagerly",
    "silent-skip": "the function is never compiled, and dynamo logs nothing",
}


def title(rule: Rule) -> str:
    return re.sub(r"\{\w+\}", "…", rule.message)


def render() -> str:
    lines = [
        "# GraphMend rules",
        "",
        "Generated from the rule classes by `tools/gen_rule_docs.py`; every example below is run through",
        "real TorchDynamo by `tests/test_corpus.py` (torch 2.13). A break inside a loop, a `try` block or",
        "an `except` handler, or under a context manager dynamo cannot resume under (anything but",
        "`torch.no_grad`, `enable_grad`, `inference_mode`, `set_grad_enabled`, `autocast`,",
        "`record_function`, `sdpa_kernel`, `contextlib.nullcontext`), makes dynamo run the whole function",
        "eagerly; findings there are errors and say so.",
        "",
        "Suppress a finding with `# graphmend: ignore[GM101]` (or a bare `# graphmend: ignore`) on its line.",
        "",
    ]
    family = ""
    for rule in ALL_RULES:
        if rule.family != family:
            family = rule.family
            lines += [f"## {family}xx: {_FAMILIES[family]}", ""]
        lines += [f"### {rule.code} {rule.name}", ""]
        lines += [f"**What:** {title(rule)}.  ", f"**Why it breaks:** {rule.why}.  ", f"**Fix:** {rule.fix}  "]
        lines += [f"**Cost:** {_EFFECTS[rule.effect.value]} (more when inside a loop, `try` or `with`).", ""]
        if isinstance(rule, CallTableRule):
            names = ", ".join(f"`{name.removeprefix('builtins.')}`" for name in rule.table)
            lines += [f"Calls flagged (each checked against dynamo): {names}.", ""]
        for heading, examples in (("Breaks", rule.breaks), ("Does not break", rule.ok)):
            for example in examples:
                note = f" ({example.note})" if example.note else ""
                lines += [f"{heading}{note}:", "", "```python", example.source.rstrip(), "```", ""]
    return "\n".join(lines)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        for out in (OUT, PACKAGED):
            current = out.read_text(encoding="utf-8") if out.exists() else ""
            if current != text:
                print(f"{out} is out of date: run `.venv/bin/python tools/gen_rule_docs.py`", file=sys.stderr)
                return 1
        return 0
    for out in (OUT, PACKAGED):
        out.parent.mkdir(exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out} ({len(ALL_RULES)} rules)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
