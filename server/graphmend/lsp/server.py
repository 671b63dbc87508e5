"""`graphmend lsp`: the analyser and the rewrites served to any editor over the Language Server
Protocol (pygls 2).

Diagnostics are pulled (`textDocument/diagnostic`) when the client supports it and pushed
otherwise, never both: VS Code shows a problem twice when it receives it both ways. Analysis runs
off the event loop, debounced per document while the user types; everything else (code actions,
fix-all, pull requests) reads the analysis stored for the document's current version.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from lsprotocol import types

from ..runtime.runner import kill_all
from . import confirm_commands, workspace_commands
from .actions import FIX_ALL_KIND, code_actions, fix_all_action
from .convert import SOURCE
from .documents import (
    path_of,
)
from .hover import hover as hover_at
from .session import GraphMendServer
from .settings import parse_editor_settings

logger = logging.getLogger(__name__)



server = GraphMendServer()


# -- lifecycle ----------------------------------------------------------------------------------
@server.feature(types.INITIALIZE)
def initialize(ls: GraphMendServer, params: types.InitializeParams) -> None:
    parsed = parse_editor_settings(params.initialization_options)
    ls.settings = parsed.settings
    ls._pending_problems = parsed.problems
    client_pulls = params.capabilities.text_document is not None and params.capabilities.text_document.diagnostic is not None
    mode = ls.settings.diagnostic_mode
    ls.pull = mode == "pull" or (mode == "auto" and client_pulls)
    if ls.pull:
        # Registered here, before pygls computes the capabilities: only a pull client is told
        # the server answers pulls, so no client ever gets diagnostics both ways.
        ls.feature(
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=ls.settings.cross_file, workspace_diagnostics=False),
        )(pull_diagnostics)


@server.feature(types.INITIALIZED)
async def initialized(ls: GraphMendServer, params: types.InitializedParams) -> None:
    for problem in ls._pending_problems:
        ls.show(problem)
    ls._pending_problems = []
    if ls._capability("workspace", "did_change_watched_files", "dynamic_registration"):
        watcher = types.FileSystemWatcher(glob_pattern="**/pyproject.toml")
        registration = types.Registration(
            id=str(uuid.uuid4()),
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception:
            logger.info("the client did not accept the pyproject.toml watcher")
    if ls._capability("workspace", "configuration"):
        await _pull_configuration(ls)


async def _pull_configuration(ls: GraphMendServer) -> None:
    try:
        answer = await ls.workspace_configuration_async(types.ConfigurationParams(items=[types.ConfigurationItem(section="graphmend")]))
    except Exception:
        return
    if answer and isinstance(answer[0], dict):
        ls.apply_settings(answer[0])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GraphMendServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and settings:
        ls.apply_settings(settings)
    elif ls._capability("workspace", "configuration"):
        await _pull_configuration(ls)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: GraphMendServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.refresh_all()


# -- documents ----------------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GraphMendServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri in ls.pushed_closed and ls.pull:
        ls.pushed_closed.discard(uri)
        ls.clear(uri)  # from now on the client pulls them: never show both
    ls.schedule(uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GraphMendServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.settings.debounce_ms / 1000)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GraphMendServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        ls.refresh_all()
    else:
        ls.schedule(uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GraphMendServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls._scheduled.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.store.forget(uri)
    if not ls.pull:
        ls.clear(uri)


# -- notebooks ----------------------------------------------------------------------------------
# pygls keeps the notebook and its cell documents in the workspace before these run.
@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
async def did_open_notebook(ls: GraphMendServer, params: types.DidOpenNotebookDocumentParams) -> None:
    await ls.publish_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
async def did_change_notebook(ls: GraphMendServer, params: types.DidChangeNotebookDocumentParams) -> None:
    await ls.publish_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: GraphMendServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.store.forget(params.notebook_document.uri)
    if not ls.pull:
        for cell in params.cell_text_documents:
            ls.clear(cell.uri)


async def pull_diagnostics(ls: GraphMendServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    analysis = await ls.analysis_for(params.text_document.uri)
    if analysis is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = ls.result_id(analysis)
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics(analysis), result_id=result_id)


# -- code actions -------------------------------------------------------------------------------
@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True),
)
async def code_action(ls: GraphMendServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
    uri = params.text_document.uri
    analysis = await ls.analysis_for(uri)
    if analysis is None:
        return []
    path = path_of(uri)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        ls.analysis_pool,
        lambda: code_actions(
            analysis,
            params.range.start.line + 1,
            params.range.end.line + 1,
            params.context.only,
            ls.workspace.position_codec,
            level=ls.settings.quick_fix_level,
            disabled_support=ls.disabled_support,
            resolve_support=ls.resolve_support,
            docs_url=ls.settings.docs_url,
            path=str(path or uri),
        ),
    )


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: GraphMendServer, params: types.HoverParams) -> types.Hover | None:
    """The finding under the cursor, explained: why, the fix or why none, dynamo's break ids and
    what the last confirmation run saw there."""
    uri = params.text_document.uri
    analysis = await ls.analysis_for(uri)
    if analysis is None:
        return None
    path = path_of(uri)
    confirmed = []
    if path is not None and ls.runtime.runs:
        for run in ls.runtime.for_text(path, analysis.text):
            confirmed.extend(run.comparison.for_path(path)[0])
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        ls.analysis_pool,
        lambda: hover_at(
            analysis,
            params.position,
            ls.workspace.position_codec,
            level=ls.settings.quick_fix_level,
            docs_url=ls.settings.docs_url,
            confirmed=confirmed,
        ),
    )


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: GraphMendServer, action: types.CodeAction) -> types.CodeAction:
    """Fill in the fix-all edit offered in the lightbulb, for the version it was offered on."""
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if not data.get("fixAll") or not isinstance(uri, str):
        return action
    analysis = await ls.analysis_for(uri)
    if analysis is None or analysis.version != data.get("version"):
        return action  # the document changed since: no edit rather than a wrong one
    path = path_of(uri)
    loop = asyncio.get_running_loop()
    resolved = await loop.run_in_executor(ls.analysis_pool, fix_all_action, analysis, ls.workspace.position_codec, str(path or uri))
    if resolved is not None:
        action.edit = resolved.edit
        action.title = resolved.title
    return action


workspace_commands.register(server)
confirm_commands.register(server)


@server.feature(types.SHUTDOWN)
def shutdown(ls: GraphMendServer, params: Any) -> None:
    ls.runtime.stop_all()  # no worker outlives the server
    kill_all()


def main(tcp: int | None = None, host: str = "127.0.0.1") -> None:
    logging.basicConfig(level=logging.WARNING, format="graphmend-lsp %(levelname)s %(name)s: %(message)s")
    if tcp is not None:
        server.start_tcp(host, tcp)
    else:
        server.start_io()
