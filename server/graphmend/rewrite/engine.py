"""Turn findings into fixes, and fix a whole file: one fix at a time, re-analysing in between.

Re-analysing after every fix keeps each fixer's view of the code exact (a fix moves lines and
changes what other findings look like) and makes the result a fixed point: running the engine on
its own output changes nothing, because every finding it leaves has a recorded reason to decline.
Code that does not parse is never produced: each step's output is parsed before it is accepted.
"""

from __future__ import annotations

import ast
import os
from collections import Counter
from dataclasses import dataclass, field

from ..analysis import analyze_detailed
from ..config import Config
from ..findings import Finding, Span
from .context import FixContext, apply_edits
from .fixers import fixers_for
from .model import DeclineError, Declined, Fix, Safety

MAX_FIXES_PER_FILE = 500
STRICT = os.environ.get("GRAPHMEND_STRICT") == "1"  # the test suite: fixer bugs raise


def plan_fix(finding: Finding, ctx: FixContext, unsafe: bool = False) -> Fix | Declined:
    """The fix for one finding, or the reason none applies (the last fixer's, if several tried)."""
    outcome: Fix | Declined = Declined(finding, "GraphMend has no automatic rewrite for this rule", "no-fixer")
    for fixer in fixers_for(finding.code, unsafe):
        try:
            return fixer.plan(finding, ctx)
        except DeclineError as exc:
            outcome = Declined(finding, exc.reason, exc.key)
        except RecursionError:
            outcome = Declined(finding, "the code is nested too deeply to rewrite", "too-deep")
        except Exception as exc:  # a bug in a fixer must not cost the file its other fixes
            if STRICT:
                raise
            outcome = Declined(finding, f"GraphMend failed while planning this rewrite ({type(exc).__name__}: {exc}); please report it", "internal-error")
    if isinstance(outcome, Declined) and outcome.key == "no-fixer" and fixers_for(finding.code, True):
        return Declined(finding, "only an unsafe fix exists (apply it explicitly, or use --unsafe-fixes)", "unsafe-only")
    return outcome


def plan_fixes(source: str, path: str = "<string>", config: Config | None = None, unsafe: bool = False) -> list[Fix | Declined]:
    """Fix or reason for every finding of `source` as it is now (for quick fixes: no chaining)."""
    result = analyze_detailed(source, path, config, keep_facts=True)
    if result.tree is None:
        return []
    ctx = FixContext(result)
    return [plan_fix(finding, ctx, unsafe) for finding in result.findings]


@dataclass
class FileFix:
    """The outcome of fixing one file. Positions of findings are in the text each was found in;
    `where()` maps a finding to its position in the original text (for `--diff` and reports)."""

    original: str
    fixed: str
    applied: list[Fix] = field(default_factory=list)
    declined: list[Declined] = field(default_factory=list)  # for findings still present at the end
    remaining: list[Finding] = field(default_factory=list)
    original_spans: dict[int, Span] = field(default_factory=dict)  # id(finding) -> span in `original`
    reasons: dict[int, Declined] = field(default_factory=dict)  # id(remaining finding) -> its decline

    def where(self, finding: Finding) -> Span:
        return self.original_spans.get(id(finding), finding.span)

    def decline_for(self, finding: Finding) -> Declined | None:
        """Why a remaining finding was not fixed (None: no fixer was tried for it)."""
        return self.reasons.get(id(finding))

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def decline_reasons(self) -> Counter[str]:
        return Counter(d.key for d in self.declined)


def _key(finding: Finding, text_lines: list[str]) -> tuple[str, str, str]:
    """A finding's identity across edits that move lines: code, function, source of its span."""
    span = finding.span
    if span.start_line == span.end_line:
        snippet = text_lines[span.start_line - 1][span.start_col : span.end_col]
    else:
        snippet = text_lines[span.start_line - 1][span.start_col :]
    return finding.code, finding.function, snippet.strip()


def fix_source(
    source: str,
    path: str = "<string>",
    config: Config | None = None,
    *,
    unsafe: bool = False,
    codes: frozenset[str] | None = None,
) -> FileFix:
    """Apply every fix that applies (safe ones; unsafe ones too with `unsafe`), to a fixed point.

    `codes` restricts which findings are fixed (the CLI's --select); analysis follows `config`.
    """
    config = config or Config()
    text = source
    applied: list[Fix] = []
    declined: dict[tuple[str, str, str], Declined] = {}
    original_at: dict[tuple[str, str, str], list[Span]] = {}  # key -> spans in the original text
    where: dict[int, Span] = {}
    for iteration in range(MAX_FIXES_PER_FILE):
        result = analyze_detailed(text, path, config, keep_facts=True)
        if result.tree is None:
            break
        lines = result.source.lines if result.source is not None else text.split("\n")
        if iteration == 0:
            for finding in result.findings:
                original_at.setdefault(_key(finding, lines), []).append(finding.span)
        ctx = FixContext(result)
        progress = False
        for finding in result.findings:
            if codes is not None and finding.code not in codes:
                continue
            key = _key(finding, lines)
            if key in declined or not fixers_for(finding.code, unsafe):
                continue
            outcome = plan_fix(finding, ctx, unsafe)
            if isinstance(outcome, Declined):
                declined[key] = outcome
                continue
            candidate = apply_edits(text, outcome.edits)
            try:
                ast.parse(candidate)
            except (SyntaxError, ValueError) as exc:
                declined[key] = Declined(finding, f"the rewrite would not parse ({exc}); left as is", "generated-code")
                continue
            text = candidate
            applied.append(outcome)
            spans = original_at.get(key)
            if spans:
                where[id(outcome.finding)] = spans.pop(0)
            progress = True
            break  # positions moved: analyse again
        if not progress:
            break
    final = analyze_detailed(text, path, config)
    remaining = final.findings
    final_lines = final.source.lines if final.source is not None else text.split("\n")
    reasons: dict[int, Declined] = {}
    for finding in remaining:
        key = _key(finding, final_lines)
        spans = original_at.get(key)
        if spans:
            where[id(finding)] = spans.pop(0)
        if key in declined:
            reasons[id(finding)] = declined[key]
    return FileFix(source, text, applied, list(reasons.values()), remaining, where, reasons)


__all__ = ["FileFix", "fix_source", "plan_fix", "plan_fixes", "Safety"]
