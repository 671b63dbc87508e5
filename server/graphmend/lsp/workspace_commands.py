"""The workspace commands: "mend whole workspace" (every safe fix, applied through one versioned
`workspace/applyEdit`), "check workspace" (diagnostics for closed files) and the "why no fix"
message; with the work-done progress they report. server.py adds them to the server (`FEATURE`)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types

from . import workspace as workspace_ops
from .actions import EXPLAIN_DECLINE
from .documents import path_of
from .feature import Feature
from .session import GraphMendServer

MEND_WORKSPACE = "graphmend.mendWorkspace"
CHECK_WORKSPACE = "graphmend.checkWorkspace"


class Progress:
    """Work-done progress when the client supports it (cancellable), nothing otherwise."""

    def __init__(self, ls: GraphMendServer, title: str) -> None:
        self.ls = ls
        self.title = title
        self.token: str | None = None

    async def begin(self) -> None:
        if not self.ls.support.work_done_progress:
            return
        token = str(uuid.uuid4())
        try:
            await self.ls.work_done_progress.create_async(token)
        except Exception:
            return
        self.token = token
        self.ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=self.title, cancellable=True, percentage=0))

    def report(self, done: int, total: int) -> None:
        if self.token is not None:
            percentage = int(100 * done / total) if total else 100
            self.ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=f"{done}/{total} files", percentage=percentage))

    def message(self, text: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self.ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=text, percentage=percentage))

    def cancelled(self) -> bool:
        future = self.ls.work_done_progress.tokens.get(self.token) if self.token is not None else None
        return bool(future is not None and future.cancelled())

    def end(self, message: str) -> None:
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))


def open_texts(ls: GraphMendServer) -> dict[Path, workspace_ops.OpenText]:
    texts: dict[Path, workspace_ops.OpenText] = {}
    for uri, document in list(ls.workspace.text_documents.items()):
        path = path_of(uri)
        if path is not None:
            texts[path.resolve()] = workspace_ops.OpenText(uri, document.version, document.source)
    return texts


async def mend_workspace(ls: GraphMendServer, *args: Any) -> dict[str, Any]:
    """Apply every safe fix in the workspace folders through one `workspace/applyEdit`."""
    progress = Progress(ls, "GraphMend: mend workspace")
    await progress.begin()
    summary = workspace_ops.MendSummary()
    loop = asyncio.get_running_loop()
    open_now = open_texts(ls)

    files = await loop.run_in_executor(
        ls.analysis_pool, lambda: [p.resolve() for p in workspace_ops.workspace_files(ls.folders(), ls.settings.exclude, ls.config_for)]
    )
    jobs = workspace_ops.fix_jobs(files, open_now, ls.config_for)
    results, cancelled = await loop.run_in_executor(
        ls.analysis_pool,
        lambda: workspace_ops.run_jobs(
            workspace_ops.fix_one, jobs, workspace_ops.worker_count(ls.settings.jobs), progress.cancelled, progress.report
        ),
    )
    summary.cancelled = cancelled
    edits: list[types.TextDocumentEdit] = []
    changes: dict[str, list[types.TextEdit]] = {}
    for result in sorted(results, key=lambda r: str(r.path)):
        summary.add(result)
        if result.fixed is None or result.fixed == result.original:
            continue
        opened = open_now.get(result.path)
        if opened is not None and not ls.support.document_changes:
            # Without versioned edits (documentChanges) the editor cannot refuse an edit computed
            # for an older version: a keystroke between this check and the apply would corrupt the
            # buffer. The file's own fix-all applies to the text the editor has.
            summary.skipped.append(f"{result.path}: open in an editor that cannot apply versioned edits (use fix-all in it)")
            continue
        now = ls.current_text(opened.uri) if opened is not None else None
        if opened is not None and (now is None or now.version != opened.version):
            summary.skipped.append(f"{result.path}: edited while the workspace was being mended")
            continue
        uri = opened.uri if opened is not None else result.path.as_uri()
        document_edit = workspace_ops.document_edit(result, uri, opened.version if opened is not None else None, ls.workspace.position_codec)
        summary.changed += 1
        summary.fixed += result.removed
        changes[uri] = list(document_edit.edits)  # type: ignore[arg-type]
        edits.append(document_edit)
    applied = True
    if changes:
        edit = types.WorkspaceEdit(document_changes=edits) if ls.support.document_changes else types.WorkspaceEdit(changes=changes)
        try:
            response = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="GraphMend: mend workspace"))
            applied = bool(response.applied)
            if not applied:
                summary.refused = response.failure_reason or "no reason given"
        except Exception as exc:
            applied = False
            summary.refused = str(exc) or type(exc).__name__
    message = summary.message()
    progress.end(message)
    ls.show(message, types.MessageType.Info if applied else types.MessageType.Warning)
    for problem in summary.skipped[:5]:
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Info, message=f"GraphMend: skipped {problem}"))
    return {
        "files": summary.files,
        "changed": summary.changed if applied else 0,
        "fixed": summary.fixed if applied else 0,
        "left": summary.left,
        "declined": dict(summary.declined),
        "skipped": summary.skipped,
        "applied": applied,
        "cancelled": summary.cancelled,
    }


def explain_decline(ls: GraphMendServer, *args: Any) -> None:
    """Show why a finding has no fix (the code action of clients without disabled actions)."""
    given = [a for a in args if a not in (None, [], {})]
    if len(given) == 1 and isinstance(given[0], list):  # clients send the arguments as one list or spread
        given = given[0]
    message = str(given[0]) if given and isinstance(given[0], str) else "no reason was given"
    ls.show(f"GraphMend: {message}", types.MessageType.Info)


async def check_workspace(ls: GraphMendServer, *args: Any) -> dict[str, Any]:
    """Diagnostics for the workspace files that are not open (open ones have theirs already)."""
    progress = Progress(ls, "GraphMend: check workspace")
    await progress.begin()
    loop = asyncio.get_running_loop()
    open_paths = set(open_texts(ls))

    files = await loop.run_in_executor(
        ls.analysis_pool, lambda: [p.resolve() for p in workspace_ops.workspace_files(ls.folders(), ls.settings.exclude, ls.config_for)]
    )
    closed = [p for p in files if p not in open_paths]
    encoding = str(ls.workspace.position_encoding or types.PositionEncodingKind.Utf16)
    jobs = workspace_ops.check_jobs(closed, ls.config_for, encoding, ls.settings.docs_url)
    results, cancelled = await loop.run_in_executor(
        ls.analysis_pool,
        lambda: workspace_ops.run_jobs(workspace_ops.check_one, jobs, workspace_ops.worker_count(ls.settings.jobs), progress.cancelled, progress.report),
    )
    findings = files_with = 0
    skipped: list[str] = []
    for path, diagnostics, skip_reason in results:
        if diagnostics is None:
            skipped.append(f"{path}: {skip_reason}")
            continue
        uri = path.as_uri()
        if diagnostics or uri in ls.pushed_closed:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        if diagnostics:
            ls.pushed_closed.add(uri)
            findings += len(diagnostics)
            files_with += 1
        else:
            ls.pushed_closed.discard(uri)
    message = (
        f"GraphMend: {findings} graph break{'s' if findings != 1 else ''} in {files_with} of {len(results)} closed "
        f"file{'s' if len(results) != 1 else ''}" + (f"; skipped {len(skipped)}" if skipped else "") + (" - cancelled." if cancelled else ".")
    )
    progress.end(message)
    ls.show(message, types.MessageType.Info)
    return {"files": len(results), "files_with_findings": files_with, "findings": findings, "skipped": skipped, "cancelled": cancelled}


FEATURE = Feature(commands=((MEND_WORKSPACE, mend_workspace), (EXPLAIN_DECLINE, explain_decline), (CHECK_WORKSPACE, check_workspace)))
