"""GraphMend's positions, findings and edits in LSP terms.

Findings count columns in characters (code points) on 1-based lines; LSP counts in the encoding
negotiated at initialization (UTF-16 unless the client offers UTF-8 or UTF-32) on 0-based lines.
pygls' `PositionCodec` does the unit conversion; the lines it is given are split the way Python's
tokenizer (and LSP) split them, never with `str.splitlines`, which also breaks at form feeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..analysis.rules import RULES_BY_CODE
from ..findings import Edit, Finding, Severity, Span
from ..textedits import in_line_ending

SOURCE = "graphmend"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
# The rule documentation shipped in the package (tools/gen_rule_docs.py writes it beside
# docs/rules.md), so an installed server links to a local copy; a `docsUrl` setting wins.
_BUNDLED_DOCS = Path(__file__).resolve().parents[1] / "rules.md"


def client_position(codec: PositionCodec, lines: Sequence[str], line: int, column: int) -> types.Position:
    """1-based line and character column -> an LSP position in the client's units."""
    index = line - 1
    if index >= len(lines):  # past the end (a stale finding): the end of the document
        return types.Position(line=max(len(lines) - 1, 0), character=codec.client_num_units(lines[-1]) if lines else 0)
    column = min(column, len(lines[index]))
    return codec.position_to_client_units(lines, types.Position(line=max(index, 0), character=column))


def client_range(codec: PositionCodec, lines: Sequence[str], span: Span) -> types.Range:
    return types.Range(
        start=client_position(codec, lines, span.start_line, span.start_col),
        end=client_position(codec, lines, span.end_line, span.end_col),
    )


def rule_anchor(code: str) -> str:
    rule = RULES_BY_CODE.get(code)
    return f"{code.lower()}-{rule.name}" if rule is not None else code.lower()


def documentation_link(code: str, docs_url: str) -> types.CodeDescription | None:
    """Where the rule is explained: `docsUrl` if set, else the packaged rules.md."""
    if code not in RULES_BY_CODE:
        return None
    if docs_url:
        return types.CodeDescription(href=f"{docs_url.rstrip('#')}#{rule_anchor(code)}")
    if _BUNDLED_DOCS.is_file():
        return types.CodeDescription(href=f"{_BUNDLED_DOCS.as_uri()}#{rule_anchor(code)}")
    return None


def to_diagnostic(finding: Finding, uri: str, codec: PositionCodec, lines: Sequence[str], docs_url: str = "") -> types.Diagnostic:
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=client_range(codec, lines, r.span)),
            message=r.message,
        )
        for r in finding.related
    ]
    return types.Diagnostic(
        range=client_range(codec, lines, finding.span),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=documentation_link(finding.code, docs_url),
        source=SOURCE,
        related_information=related or None,
        data={"code": finding.code, "line": finding.span.start_line, "column": finding.span.start_col},
    )


def to_text_edits(edits: Sequence[Edit], codec: PositionCodec, lines: Sequence[str], ending: str = "\n") -> list[types.TextEdit]:
    """Edits in client units, their text in the document's line ending (fixers write "\n")."""
    return [types.TextEdit(range=client_range(codec, lines, e.span), new_text=in_line_ending(e.new_text, ending)) for e in edits]
