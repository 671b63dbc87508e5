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

from ..findings import EagerPoint, Finding, Related, Severity


def mark_latent(findings: list[Finding]) -> list[Finding]:
    """`findings`, with those an eager point dominates marked latent (the earliest such point named)."""
    points = sorted((point for f in findings for point in f.eager_from), key=lambda p: p.span.start_line)
    if not points:
        return findings
    marked = []
    for finding in findings:
        point = next((p for p in points if p.dominates(finding)), None)
        marked.append(finding if point is None else _latent(finding, point))
    return marked


def _latent(finding: Finding, point: EagerPoint) -> Finding:
    eager_from = point.span
    how = "from there" if point.function == finding.function else "there, and the TorchScript function it calls runs with no Python frame"
    note = (
        f" Dynamo does not reach it yet: the break on line {eager_from.start_line} makes it run `{point.function}` "
        f"eagerly {how}; it breaks here once that one is fixed."
    )
    return dataclasses.replace(
        finding,
        latent=True,
        severity=Severity.INFO,
        message=finding.message + note,
        related=(*finding.related, Related(eager_from, f"where dynamo starts running `{point.function}` eagerly")),
    )
