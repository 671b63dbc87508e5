"""Code actions for one document version, from the stored analysis (never from the client's
`context.diagnostics`: Neovim 0.7 sends only what its user code builds).

- a quick fix per finding with a rewrite: safe ones preferred, costly and unsafe ones titled with
  their tier and what they change (offered up to the `quickFixLevel` setting);
- for a finding no fixer can rewrite, a disabled action that says why, where the client shows
  disabled actions (VS Code);
- for a finding in code nothing known compiles, "Treat `f` as compiled": its entry added to
  `[tool.graphmend] compiled` in the pyproject.toml whose table is in force;
- "Ignore GMxxx on this line";
- `source.fixAll.graphmend`: every safe fix in the file, to a fixed point.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from ..analysis.rules import PARSE_ERROR_CODE
from ..compiled_entries import compiled_entry_insertion, entry_for, nearest_pyproject
from ..findings import Edit
from ..rewrite import Declined
from ..rewrite.model import Safety
from ..rewrite.suppress import suppression_edit
from ..textedits import text_edits
from .convert import client_position, to_diagnostic, to_text_edits
from .documents import Analysis
from .settings import QUICK_FIX_LEVEL_HINT

FIX_ALL_KIND = "source.fixAll.graphmend"
EXPLAIN_DECLINE = "graphmend.explainDecline"  # shows a decline's reason (clients without disabled actions)


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether the client asked for actions of `kind` (`only` lists kinds or their prefixes)."""
    return only is None or any(kind == o or kind.startswith(o + ".") for o in only)


def code_actions(
    analysis: Analysis,
    first_line: int,
    last_line: int,
    only: Sequence[str] | None,
    codec: PositionCodec,
    *,
    level: Safety,
    disabled_support: bool,
    resolve_support: bool,
    docs_url: str,
    path: str,
) -> list[types.CodeAction | types.Command]:
    """Actions for the findings on lines `first_line`..`last_line` (1-based), and fix-all (its
    edit left for `codeAction/resolve` when the client resolves edits lazily)."""
    actions: list[types.CodeAction | types.Command] = []
    safe_fix_here = False
    for index, finding in analysis.own_findings():
        if not (finding.span.start_line <= last_line and finding.span.end_line >= first_line) or finding.code == PARSE_ERROR_CODE:
            continue
        diagnostic = to_diagnostic(finding, analysis.uri, codec, analysis.lines, docs_url)
        if wanted(types.CodeActionKind.QuickFix, only) and analysis.parses:
            outcome = analysis.plan(index, level)
            if isinstance(outcome, Declined):
                if outcome.key != "no-fixer":
                    actions.append(why_not_action(finding.code, outcome, diagnostic, disabled_support))
            else:
                safe = outcome.safety is Safety.SAFE
                safe_fix_here = safe_fix_here or safe
                title = f"{outcome.safety.label}{outcome.title} ({finding.code})"
                actions.append(_edit_action(analysis, codec, title, types.CodeActionKind.QuickFix, outcome.edits, [diagnostic], preferred=safe))
                safe_outcome = analysis.plan(index, Safety.SAFE) if not safe else outcome
                if isinstance(safe_outcome, Declined) and safe_outcome.key not in ("no-fixer", "riskier-only"):
                    actions.append(why_not_action(finding.code, safe_outcome, diagnostic, disabled_support))
        if finding.if_compiled and finding.uncompiled_root and wanted(types.CodeActionKind.QuickFix, only):
            named = compiled_entry_action(finding.uncompiled_root, path, diagnostic, codec, analysis.config.root)
            if named is not None:
                actions.append(named)
        if wanted(types.CodeActionKind.QuickFix, only):
            edit = suppression_edit(analysis.text, finding, analysis.lines, analysis.parses)
            if edit is not None:
                title = f"Ignore {finding.code} on this line"
                actions.append(_edit_action(analysis, codec, title, types.CodeActionKind.QuickFix, (edit,), [diagnostic], preferred=False))
    explicit_fix_all = only is not None and wanted(FIX_ALL_KIND, only)
    if analysis.parses and (explicit_fix_all or (safe_fix_here and wanted(FIX_ALL_KIND, only))):
        if resolve_support and not explicit_fix_all:
            # The lightbulb: offer it, compute it only if chosen (a whole-file fix costs a few
            # analyses; codeAction/resolve fills in the edit).
            actions.append(
                types.CodeAction(
                    title="GraphMend: fix every safely fixable graph break in this file",
                    kind=FIX_ALL_KIND,
                    data={"uri": analysis.uri, "version": analysis.version, "fixAll": True},
                )
            )
        else:
            fix_all = fix_all_action(analysis, codec, path)
            if fix_all is not None:
                actions.append(fix_all)
    return actions


def compiled_entry_action(
    root: str, path: str, diagnostic: types.Diagnostic, codec: PositionCodec, config_root: Path | None
) -> types.CodeAction | None:
    """"Treat `root` as compiled": its entry added to `[tool.graphmend] compiled` in the
    pyproject.toml the document's configuration comes from (`config_root`), else the nearest one
    (a table added to another would hide the one in force); read from disk, nothing is offered
    without one or where the file's shape is not one edited safely (compiled_entries.py). The edit
    is one insertion, so the file keeps its comments; once saved, the server reads the table again
    and the function's findings become ordinary ones, with their fixes."""
    document = Path(path)
    if not document.is_absolute():
        return None
    pyproject = config_root / "pyproject.toml" if config_root is not None else nearest_pyproject(document)
    entry = entry_for(document, pyproject, root) if pyproject is not None else None
    if pyproject is None or entry is None:
        return None
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    insertion = compiled_entry_insertion(text, entry)
    if insertion is None:
        return None
    lines = text.splitlines()
    position = client_position(codec, lines, insertion.line + 1, insertion.column) if insertion.line < len(lines) else types.Position(line=len(lines), character=0)
    edit = types.TextEdit(range=types.Range(start=position, end=position), new_text=insertion.text)
    return types.CodeAction(
        title=f"Treat `{root}` as compiled (add \"{entry}\" to [tool.graphmend] compiled)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={pyproject.as_uri(): [edit]}),
    )


def why_not_action(code: str, outcome: Declined, diagnostic: types.Diagnostic, disabled_support: bool) -> types.CodeAction | types.Command:
    """Why this finding has no safe fix: a disabled action where the client shows those (VS Code),
    else a command that shows the reason (Neovim and Emacs list it with the fixes)."""
    reason = outcome.explanation(QUICK_FIX_LEVEL_HINT)
    if disabled_support:
        return types.CodeAction(
            title=f"GraphMend: no safe rewrite for {code}",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            disabled=types.CodeActionDisabled(reason=reason),
        )
    title = f"GraphMend: why no safe fix for {code}"
    return types.Command(title=title, command=EXPLAIN_DECLINE, arguments=[f"{code}: {reason}"])


def fix_all_action(analysis: Analysis, codec: PositionCodec, path: str) -> types.CodeAction | None:
    """Every safe fix in the document, as minimal line edits."""
    result = analysis.fixed(path)
    if not result.changed:
        return None
    count = result.gone() or len(result.applied)  # break sites, as the CLI summary counts them
    title = f"GraphMend: fix {count} graph break{'s' if count != 1 else ''} in this file (safe rewrites)"
    return _edit_action(analysis, codec, title, FIX_ALL_KIND, text_edits(analysis.text, result.fixed), None, preferred=False)


def _edit_action(
    analysis: Analysis,
    codec: PositionCodec,
    title: str,
    kind: str,
    edits: Sequence[Edit],
    diagnostics: list[types.Diagnostic] | None,
    preferred: bool,
) -> types.CodeAction:
    text_edits_ = to_text_edits(edits, codec, analysis.lines, analysis.ending)
    document = types.OptionalVersionedTextDocumentIdentifier(uri=analysis.uri, version=analysis.version)
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diagnostics,
        is_preferred=preferred or None,
        edit=types.WorkspaceEdit(
            changes={analysis.uri: text_edits_},
            document_changes=[types.TextDocumentEdit(text_document=document, edits=list(text_edits_))],
        ),
    )
