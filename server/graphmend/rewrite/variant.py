"""Plan a fix on a variant of the file (the same code with a preparatory change made only for
that fix) and turn it into edits of the original text.

Some rewrites apply only once the code is put in a shape they take: the end of a function
repeated inside an `if` (`tail_copy`), a mask written inline bound to a name first
(`mask_hoist`). The variant is analysed again, the same finding found there, and the fixer's plan
for it, applied to the variant, is the fix; where anything fails along the way the original
reason for declining stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..analysis import analyze_detailed
from ..findings import Finding
from ..textedits import apply_edits, parses, text_edits
from .context import FixContext
from .lookahead import focused
from .model import DeclineError, Fix
from .nesting import nested, too_deep


def plan_on_variant(
    finding: Finding,
    ctx: FixContext,
    variant_text: str,
    moved_line: int,
    declined: DeclineError,
    plan: Callable[[Finding, FixContext], Fix],
    why: str,
    renamed: dict[str, str] | None = None,
) -> Fix:
    """`plan` for `finding` (now starting on `moved_line`, at its column) in `variant_text`, as
    edits of the original text, its title followed by `why`. Raises `declined` where the variant
    does not parse or the finding is not there; where `plan` declines on the variant, its reason,
    the more specific one (with the names the variant introduced written as `renamed` says)."""
    if too_deep() or not parses(variant_text):
        raise declined
    # walking only the finding's function where it is an entry, as the lookahead does: the variant
    # differs from the file there alone (a whole analysis of a large model file, with its pass over
    # the code nothing compiles, was most of the time `check` spent deciding such fixes)
    result = analyze_detailed(variant_text, ctx.result.path, focused(ctx, finding.function), keep_facts=True)
    if result.tree is None:
        raise declined
    same = [f for f in result.findings if f.code == finding.code and f.span.start_line == moved_line and f.span.start_col == finding.span.start_col]
    if not same:
        raise declined
    try:
        with nested(declined):
            fix = plan(same[0], FixContext(result))
    except DeclineError as inner:
        reason = inner.reason
        for name, text in (renamed or {}).items():
            reason = reason.replace(name, text)
        raise DeclineError(inner.key, reason) from None
    fixed = apply_edits(variant_text, list(fix.edits))
    if not parses(fixed):
        raise declined
    return replace(fix, finding=finding, title=f"{fix.title}; {why}", edits=tuple(text_edits(ctx.text, fixed)))
