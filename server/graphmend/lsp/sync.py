"""Documents and notebooks as the editor opens, edits, saves and closes them, and the diagnostics
that follow: analysis is scheduled (debounced while typing) and pushed, or answered when the client
pulls (`pull_diagnostics`, registered at `initialize` for pull clients only)."""

from __future__ import annotations

from lsprotocol import types

from .feature import Feature
from .session import GraphMendServer


def did_open(ls: GraphMendServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri in ls.pushed_closed and ls.pull:
        ls.pushed_closed.discard(uri)
        ls.clear(uri)  # from now on the client pulls them: never show both
    ls.schedule(uri, 0)


def did_change(ls: GraphMendServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.settings.debounce_ms / 1000)


def did_save(ls: GraphMendServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri.endswith("pyproject.toml"):
        ls.refresh_all()
    else:
        ls.schedule(uri, 0)


def did_close(ls: GraphMendServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.cancel(uri)
    ls.store.forget(uri)
    if not ls.pull:
        ls.clear(uri)


# pygls keeps the notebook and its cell documents in the workspace before these run.
async def did_open_notebook(ls: GraphMendServer, params: types.DidOpenNotebookDocumentParams) -> None:
    await ls.publish_notebook(params.notebook_document.uri)


async def did_change_notebook(ls: GraphMendServer, params: types.DidChangeNotebookDocumentParams) -> None:
    await ls.publish_notebook(params.notebook_document.uri)


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


FEATURE = Feature(
    handlers=(
        (types.TEXT_DOCUMENT_DID_OPEN, did_open, None),
        (types.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
        (types.TEXT_DOCUMENT_DID_SAVE, did_save, None),
        (types.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
        (types.NOTEBOOK_DOCUMENT_DID_OPEN, did_open_notebook, None),
        (types.NOTEBOOK_DOCUMENT_DID_CHANGE, did_change_notebook, None),
        (types.NOTEBOOK_DOCUMENT_DID_CLOSE, did_close_notebook, None),
    )
)
