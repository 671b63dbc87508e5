"""Latent breaks: code dynamo does not reach today because an earlier break makes it run the
function eagerly from there on.

A break in a loop (or one dynamo cannot resume after) makes dynamo give up on the function: the
rest of it runs in plain Python and dynamo logs nothing more there. Findings after that point are
still code dynamo cannot trace, and they break as soon as the earlier break is fixed, so they are
kept, but marked `latent`: shown at information severity, with the break that hides them as related
information, and not counted as breaks dynamo reports (a fix summary that counted them claimed
breaks gone that dynamo never saw: a line search whose prints follow a loop dynamo skips).
"""

from __future__ import annotations

import dataclasses

from ..findings import Finding, Related, Severity, Span


def mark_latent(findings: list[Finding]) -> list[Finding]:
    """`findings`, with those after the first certain eager point of their function marked latent."""
    first: dict[str, Span] = {}
    for finding in findings:
        if finding.eager_from is not None:
            function, span = finding.eager_from
            if function not in first or span.start_line < first[function].start_line:
                first[function] = span
    if not first:
        return findings
    return [_latent(f, first[f.function]) if f.function in first and f.span.start_line > first[f.function].end_line else f for f in findings]


def _latent(finding: Finding, eager_from: Span) -> Finding:
    note = (
        f" Dynamo does not reach it yet: the break on line {eager_from.start_line} makes it run `{finding.function}` "
        "eagerly from there; it breaks here once that one is fixed."
    )
    return dataclasses.replace(
        finding,
        latent=True,
        severity=Severity.INFO,
        message=finding.message + note,
        related=(*finding.related, Related(eager_from, f"where dynamo starts running `{finding.function}` eagerly")),
    )
