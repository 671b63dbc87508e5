"""Hover on a finding: what breaks and why, the fix (or why there is none), the TorchDynamo
graph-break ids the rule corresponds to, and what the last confirmation run saw there.

A diagnostic's message is one line in most editors' lists; the hover is where the whole story
fits, in Markdown, next to the code. Dynamo's ids (`GB0036`) are what its own logs and
`TORCH_LOGS=graph_breaks` print, and each has a page on PyTorch's graph-break site, so a user can go
from GraphMend's words to dynamo's and back.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..analysis.rules import PARSE_ERROR_CODE, RULES_BY_CODE
from ..analysis.rules.dynamo_ids import GRAPH_BREAK_TYPES, gb_ids_for, graph_break_url
from ..findings import Finding
from ..rewrite import Declined
from ..rewrite.model import Safety
from ..runtime.compare import MarkedFinding
from .convert import client_range, documentation_link
from .documents import Analysis
from .settings import QUICK_FIX_LEVEL_HINT


def findings_at(analysis: Analysis, position: types.Position, codec: PositionCodec) -> list[tuple[int, Finding]]:
    """The findings (with their index) whose span holds `position` (client units, 0-based line)."""
    lines = analysis.lines
    if position.line >= len(lines):
        return []
    column = codec.position_from_client_units(lines, position).character
    line = position.line + 1
    found = []
    for index, finding in analysis.own_findings():
        span = finding.span
        after_start = (line, column) >= (span.start_line, span.start_col)
        before_end = (line, column) <= (span.end_line, span.end_col)
        if after_start and before_end:
            found.append((index, finding))
    return found


def hover(
    analysis: Analysis,
    position: types.Position,
    codec: PositionCodec,
    *,
    level: Safety,
    docs_url: str,
    confirmed: Sequence[MarkedFinding] = (),
) -> types.Hover | None:
    """The hover for `position`, or None where no finding is."""
    found = findings_at(analysis, position, codec)
    if not found:
        return None
    sections = [_section(analysis, index, finding, level, docs_url, confirmed) for index, finding in found]
    innermost = min((f for _, f in found), key=lambda f: (f.span.end_line - f.span.start_line, f.span.end_col - f.span.start_col))
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(sections)),
        range=client_range(codec, analysis.lines, innermost.span),
    )


def _section(analysis: Analysis, index: int, finding: Finding, level: Safety, docs_url: str, confirmed: Sequence[MarkedFinding]) -> str:
    rule = RULES_BY_CODE.get(finding.code)
    name = f" {rule.name}" if rule is not None else ""
    parts = [f"**{finding.code}{name}**: {finding.message}"]
    if rule is not None and rule.why:
        parts.append(f"**Why it breaks:** {rule.why}.")
    if finding.code != PARSE_ERROR_CODE and analysis.parses:
        parts.append(_fix_text(analysis, index, level))
    ids = gb_ids_for(finding.code)
    if ids:
        links = ", ".join(f"[{gb} {GRAPH_BREAK_TYPES[gb]}]({graph_break_url(gb)})" for gb in ids)
        parts.append(f"**TorchDynamo** reports it as {links}.")
    seen = [m for m in confirmed if m.finding.code == finding.code and m.finding.span.start_line == finding.span.start_line]
    for marked in seen:
        runtime = marked.runtime
        said = f": {runtime.gb_id + ' ' if runtime.gb_id else ''}{runtime.summary}. {runtime.explanation}" if runtime is not None else "."
        parts.append(f"**Last confirmation run:** {marked.mark.describe}{said}".rstrip())
    link = documentation_link(finding.code, docs_url)
    if link is not None:
        parts.append(f"[{finding.code} in the rule documentation]({link.href})")
    return "\n\n".join(parts)


def _fix_text(analysis: Analysis, index: int, level: Safety) -> str:
    """The safe fix, or why there is none (and the riskier one the settings offer, if any)."""
    safe = analysis.plan(index, Safety.SAFE)
    if not isinstance(safe, Declined):
        return f"**Safe fix** (quick fix, fix-all and mend-workspace apply it): {safe.title}."
    if safe.key == "no-fixer":
        return "**Fix:** no automatic rewrite for this rule; see the advice above."
    if level is not Safety.SAFE:
        riskier = analysis.plan(index, level)
        if not isinstance(riskier, Declined) and riskier.safety is not Safety.SAFE:
            tier = riskier.safety.value.capitalize()
            return f"**No safe fix:** {safe.reason}. **{tier} fix** (a quick fix only, never applied in bulk): {riskier.title}."
    return f"**No safe fix:** {safe.explanation(QUICK_FIX_LEVEL_HINT)}."
