"""Turn findings into fixes, and fix a whole file: one fix at a time, re-analysing in between.

Re-analysing after every fix keeps each fixer's view of the code exact (a fix moves lines and
changes what other findings look like) and makes the result a fixed point: running the engine on
its own output changes nothing, because every finding it leaves has a recorded reason to decline.
Code that does not parse is never produced: each step's output is parsed before it is accepted.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ..analysis import analyze_detailed
from ..config import Config
from ..findings import Finding, Span
from ..textedits import apply_edits, parses
from . import float_specialisation
from .context import FixContext
from .fixers import Fixer, fixers_for
from .model import NOT_MY_PATTERN, Declined, DeclineError, Fix, Safety

MAX_FIXES_PER_FILE = 500
STRICT = os.environ.get("GRAPHMEND_STRICT") == "1"  # the test suite: fixer bugs raise


def plan_fix(finding: Finding, ctx: FixContext, level: Safety = Safety.SAFE, riskier: bool = True) -> Fix | Declined:
    """The fix for one finding at fix level `level`, or why none applies. With several fixers
    declining, the reason shown is the first one whose pattern matched (a failed precondition
    says more than "not my pattern"); the others stay in `also`. Below the unsafe level, a
    decline names the riskier fix that would apply, so the user knows there is one and what it
    changes; `riskier=False` skips looking for it (`check`'s `[*]` needs only whether a fix at
    `level` exists)."""
    if finding.if_compiled:  # rewriting code nothing compiles would only cost its readability
        return Declined(
            finding,
            f"nothing GraphMend sees compiles `{finding.function}`: name it in `[tool.graphmend] compiled` to get its fix",
            "not-compiled",
        )
    declines: list[Declined] = []
    narrow: list[Declined] = []  # declines of fixers for one special shape of the pattern
    alternative: Fix | None = None
    for fixer in fixers_for(finding.code, level):
        outcome = _plan_one(fixer, finding, ctx)
        if isinstance(outcome, Declined):
            declines.append(outcome)
            if _narrow_for(fixer, finding.code):
                narrow.append(outcome)
        elif not level.allows(outcome.safety):  # a fixer's riskier variant
            alternative = alternative or outcome
        else:
            return outcome
    if alternative is None and level is not Safety.UNSAFE and riskier:
        alternative = _riskier_alternative(finding, ctx, level)
    title, tier = (alternative.title, alternative.safety) if alternative is not None else (None, None)
    specific = [d for d in declines if d.key not in NOT_MY_PATTERN]
    # No precondition failed where `specific` is empty: every fixer says "not my pattern". The
    # general fixer for the rule says the most ("a branch does more than assign a name (`break`)",
    # "`input` is read after the block that binds it"); a narrow one's "the condition is not a
    # padding-mask test" says least.
    general = [d for d in declines if not any(d is n for n in narrow)]
    if not specific and alternative is not None:
        why = f" ({general[0].reason})" if general else ""
        return Declined(finding, f"no {level.value} rewrite applies{why}", "riskier-only", tuple(declines), title, tier)
    if not declines:
        return Declined(finding, "GraphMend has no automatic rewrite for this rule", "no-fixer")
    chosen = (specific or general or declines)[0]
    others = tuple(d for d in declines if d is not chosen)
    return Declined(finding, chosen.reason, chosen.key, others, title, tier)


def _narrow_for(fixer: Fixer, code: str) -> bool:
    """Whether `fixer` rewrites only one shape of `code`'s pattern: its "not my pattern" then says
    less than the general fixer's. `narrow` is True (every code of the fixer) or a set of codes."""
    narrow = getattr(fixer, "narrow", False)
    return code in narrow if isinstance(narrow, frozenset) else bool(narrow)


def _plan_one(fixer: Fixer, finding: Finding, ctx: FixContext) -> Fix | Declined:
    try:
        fix = fixer.plan(finding, ctx)
        # a fix that joins graphs can reach an inductor miscompile no fixer checks for itself
        float_specialisation.check_fix(finding, fix.edits, ctx)
        return fix
    except DeclineError as exc:
        return Declined(finding, exc.reason, exc.key)
    except RecursionError:
        return Declined(finding, "the code is nested too deeply to rewrite", "too-deep")
    except Exception as exc:  # a bug in a fixer must not cost the file its other fixes
        if STRICT:
            raise
        return Declined(finding, f"GraphMend failed while planning this rewrite ({type(exc).__name__}: {exc}); please report it", "internal-error")


def _riskier_alternative(finding: Finding, ctx: FixContext, level: Safety) -> Fix | None:
    """The first fix above `level` that applies to `finding`, if any (the least risky tier first)."""
    riskier = [f for f in fixers_for(finding.code, Safety.UNSAFE) if not level.allows(f.safety)]
    for fixer in sorted(riskier, key=lambda f: f.safety is Safety.UNSAFE):
        outcome = _plan_one(fixer, finding, ctx)
        if isinstance(outcome, Fix):
            return outcome
    return None


def plan_fixes(source: str, path: str = "<string>", config: Config | None = None, level: Safety = Safety.SAFE) -> list[Fix | Declined]:
    """Fix or reason for every finding of `source` as it is now (for quick fixes: no chaining)."""
    result = analyze_detailed(source, path, config, keep_facts=True)
    if result.tree is None:
        return []
    ctx = FixContext(result)
    return [plan_fix(finding, ctx, level) for finding in result.findings]


@dataclass
class FileFix:
    """The outcome of fixing one file. Positions of findings are in the text each was found in;
    `where()` maps a finding to its position in the original text (for `--diff` and reports)."""

    original: str
    fixed: str
    applied: list[Fix] = field(default_factory=list)
    declined: list[Declined] = field(default_factory=list)  # for findings still present at the end
    remaining: list[Finding] = field(default_factory=list)
    # (finding, its span in `original`) and (remaining finding, why it was not fixed): pairs, not
    # dicts keyed by id(), so that they survive pickling (`fix -j` returns results from workers)
    original_spans: list[tuple[Finding, Span]] = field(default_factory=list)
    reasons: list[tuple[Finding, Declined]] = field(default_factory=list)
    before: list[Finding] = field(default_factory=list)  # the findings of `original`

    def where(self, finding: Finding) -> Span:
        return next((span for f, span in self.original_spans if f is finding), finding.span)

    def decline_for(self, finding: Finding) -> Declined | None:
        """Why a remaining finding was not fixed (None: no fixer was tried for it)."""
        return next((declined for f, declined in self.reasons if f is finding), None)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def decline_reasons(self) -> Counter[str]:
        return Counter(d.key for d in self.declined)

    def gone(self, codes: frozenset[str] | None = None) -> int:
        """How many graph breaks (of findings of `codes`) the fixes removed, counted as dynamo
        counts them (`break_count`): a fix that removes findings in a function that still runs
        eagerly removes no break."""
        return max(0, break_count(self.before, codes) - break_count(self.remaining, codes))


def break_count(findings: list[Finding], codes: frozenset[str] | None = None) -> int:
    """The graph-break sites dynamo would report for these findings: one per line, as dynamo
    logs a break where it stops (two findings in `print(t.item())` are one site). Counting
    findings instead claimed 8 breaks gone in a line search where dynamo saw 1 site gone; per
    line it claims 2 (dynamo skipped that frame for a reason the analysis does not see). Latent
    findings (after a break that makes dynamo run their function eagerly) are not breaks dynamo
    reports; once the hiding break is fixed, the re-analysis counts them."""
    return len({(f.function, f.span.start_line) for f in findings if not f.latent and not f.if_compiled and (codes is None or f.code in codes)})


def _key(finding: Finding, text_lines: list[str]) -> tuple[str, str, str]:
    """A finding's identity across edits that move lines: code, function, source of its span."""
    span = finding.span
    if span.start_line == span.end_line:
        snippet = text_lines[span.start_line - 1][span.start_col : span.end_col]
    else:
        snippet = text_lines[span.start_line - 1][span.start_col :]
    return finding.code, finding.function, snippet.strip()


def _numbered_keys(findings: list[Finding], text_lines: list[str]) -> list[tuple[str, str, str, int]]:
    """Each finding's `_key` with the number of findings before it that share it: two identical
    tests in one function (`if x.sum() > 0:` twice) are two findings, and the decline of one must
    not be taken for the other's (the second, fixable, was never planned)."""
    seen: dict[tuple[str, str, str], int] = {}
    keys = []
    for finding in findings:
        key = _key(finding, text_lines)
        keys.append((*key, seen.get(key, 0)))
        seen[key] = seen.get(key, 0) + 1
    return keys


def _accepted(text: str, batch: list[tuple[tuple[str, str, str, int], Fix]], declined: dict) -> list[tuple[tuple[str, str, str, int], Fix]]:
    """The fixes of `batch` to apply: all of them when the result parses; otherwise the first one
    that parses alone (the others are planned again on the next analysis)."""
    if not batch:
        return []
    if parses(apply_edits(text, [edit for _, fix in batch for edit in fix.edits])):
        return batch
    for key, fix in batch:
        if parses(apply_edits(text, fix.edits)):
            return [(key, fix)]
        declined[key] = Declined(fix.finding, "the rewrite would not parse; left as is", "generated-code")
    return []


def fix_source(
    source: str,
    path: str = "<string>",
    config: Config | None = None,
    *,
    level: Safety = Safety.SAFE,
    codes: frozenset[str] | None = None,
) -> FileFix:
    """Apply every fix that applies at fix level `level` (safe ones by default), to a fixed point.

    `codes` restricts which findings are fixed (the CLI's --select); analysis follows `config`.
    """
    config = config or Config()
    text = source
    applied: list[Fix] = []
    declined: dict[tuple[str, str, str, int], Declined] = {}
    # the text of its function when each finding was declined: a fix elsewhere in that function
    # (`.item()` kept as a tensor) can make it fixable, so it is planned again once that changes
    declined_in: dict[tuple[str, str, str, int], str | None] = {}
    original_at: dict[tuple[str, str, str], list[Span]] = {}  # key -> spans in the original text
    where: list[tuple[Finding, Span]] = []
    before: list[Finding] = []
    first_lines: list[str] = []
    result = None
    for iteration in range(MAX_FIXES_PER_FILE):
        result = analyze_detailed(text, path, config, keep_facts=True)
        if result.tree is None:
            break
        lines = result.source.lines if result.source is not None else text.split("\n")
        if iteration == 0:
            before, first_lines = list(result.findings), lines
            for finding in result.findings:
                original_at.setdefault(_key(finding, lines), []).append(finding.span)
        ctx = FixContext(result)
        # Fixes in different functions are planned on the same analysis and applied together;
        # a second fix in a function already being changed, or one with edits outside its
        # function (an added import), waits for the next round and its fresh analysis.
        batch: list[tuple[tuple[str, str, str, int], Fix]] = []
        taken: list[tuple[int, int]] = []
        for finding, key in zip(result.findings, _numbered_keys(result.findings, lines)):
            if codes is not None and finding.code not in codes:
                continue
            if not fixers_for(finding.code, level):
                continue
            scope = ctx.function_lines(finding)
            scope_text = "\n".join(lines[scope[0] - 1 : scope[1]]) if scope is not None else None
            if key in declined and declined_in.get(key) == scope_text:
                continue  # declined, and its function has not changed since: the same answer
            if scope is not None and any(scope[0] <= end and start <= scope[1] for start, end in taken):
                continue
            outcome = plan_fix(finding, ctx, level)
            if isinstance(outcome, Declined):
                declined[key], declined_in[key] = outcome, scope_text
                continue
            declined.pop(key, None)  # another fix in its function made it fixable
            alone = scope is None or any(not (scope[0] <= e.span.start_line and e.span.end_line <= scope[1] + 1) for e in outcome.edits)
            if alone and batch:
                continue
            batch.append((key, outcome))
            if alone:
                break
            taken.append(scope)  # type: ignore[arg-type]
        accepted = _accepted(text, batch, declined)
        for key, fix in accepted:
            applied.append(fix)
            spans = original_at.get(key[:3])
            if spans:
                # the spans left of this key belong, in order, to the findings of it not yet fixed
                where.append((fix.finding, spans.pop(key[3] if key[3] < len(spans) else 0)))
        if accepted:
            text = apply_edits(text, [edit for _, fix in accepted for edit in fix.edits])
        progress = bool(accepted)
        if not progress:
            break
    else:
        # Stopped by the limit, not by a fixed point. Where the fixes applied left no fewer
        # findings than there were, some fix keeps bringing its finding back (it rewrote without
        # removing the break, again and again): keep the source as it was rather than write that.
        if len(analyze_detailed(text, path, config).findings) >= len(before):
            text, applied, where = source, [], []
            declined.clear()
            original_at = {}
            for finding in before:
                original_at.setdefault(_key(finding, first_lines), []).append(finding.span)
            result = None
    # The last analysis saw the final text unless a fix was applied after it (then analyse again).
    final = result if result is not None and result.source is not None and result.source.text == text else analyze_detailed(text, path, config, keep_facts=True)
    remaining = final.findings
    final_lines = final.source.lines if final.source is not None else text.split("\n")
    reasons: list[tuple[Finding, Declined]] = []
    final_ctx: FixContext | None = None
    for finding, key in zip(remaining, _numbered_keys(remaining, final_lines)):
        spans = original_at.get(key[:3])
        if spans:
            where.append((finding, spans.pop(0)))
        if key in declined:
            reasons.append((finding, declined[key]))
        elif final.tree is not None and (codes is None or finding.code in codes) and fixers_for(finding.code, Safety.UNSAFE):
            # never planned (only riskier fixers than the run's level): say why, and what else exists
            final_ctx = final_ctx or FixContext(final)
            outcome = plan_fix(finding, final_ctx, level)
            if isinstance(outcome, Fix):  # possible only when MAX_FIXES_PER_FILE stopped the loop
                outcome = Declined(finding, f"not applied: more than {MAX_FIXES_PER_FILE} fixes in one file", "fix-limit")
            reasons.append((finding, outcome))
    return FileFix(source, text, applied, [d for _, d in reasons], remaining, where, reasons, before)


__all__ = ["FileFix", "Safety", "fix_source", "plan_fix", "plan_fixes"]
