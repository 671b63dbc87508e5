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
import multiprocessing
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..analysis import analyze
from ..analysis.source import SourceFile
from ..config import Config
from ..files import read_source
from ..findings import Finding
from ..imported_disables import ImportedDisables
from ..notebooks import CellSpan
from ..runtime.compare import compare, files_to_compare
from ..runtime.runner import ConfirmError, RunOptions, kill_all, run_sample
from ..runtime.samples import (
    Sample,
    SampleError,
    configured_samples,
    find_sample,
    samples_for_file,
)
from ..workers import worker_pool
from . import workspace as workspace_ops
from .actions import EXPLAIN_DECLINE, FIX_ALL_KIND, code_actions, fix_all_action
from .confirm import (
    CONFIRM,
    ConfirmRun,
    RuntimeStore,
    code_lenses,
    decorate,
    run_summary,
)
from .convert import SOURCE, to_diagnostic
from .crossfile import CrossFileIndex, call_sites, resolve
from .documents import (
    Analysis,
    ConfigCache,
    DocumentStore,
    display_name,
    editor_config,
    path_of,
)
from .hover import hover as hover_at
from .notebook_cells import CellAnalysis, joined_cells, notebook_of
from .protocol import GraphMendProtocol
from .settings import Settings, parse_settings

logger = logging.getLogger(__name__)

MEND_WORKSPACE = "graphmend.mendWorkspace"
CHECK_WORKSPACE = "graphmend.checkWorkspace"


@dataclass
class _Text:
    uri: str
    version: int | None
    text: str


class GraphMendServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "graphmend",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=GraphMendProtocol,
            # Python cells of any notebook: analysed together, shown per cell (notebook_cells.py)
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook="*")]
            ),
        )
        self.settings = Settings()
        self.store = DocumentStore()
        self.configs = ConfigCache()
        self.crossfile = CrossFileIndex()
        self.imported_disables = ImportedDisables()  # names bound to torch.compiler.disable in other files
        self.runtime = RuntimeStore()  # the last TorchDynamo run of each sample
        self.pull = False  # decided at initialization
        self.generation = 0  # bumped when settings or configuration change every document's result
        self.background: set[asyncio.Future[None]] = set()  # cross-file follow-ups still running
        self.analysis_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphmend-analysis")
        self._scheduled: dict[str, asyncio.Task] = {}
        self._shown_errors: set[str] = set()
        self._pushed_closed: set[str] = set()  # uris given diagnostics by checkWorkspace while closed
        self._pending_problems: list[str] = []
        self._jedi_pool: ProcessPoolExecutor | None = None

    def jedi_pool(self) -> ProcessPoolExecutor:
        """One long-lived worker process for jedi: its inference takes seconds on a large file and
        would hold the GIL against the analyses of the user's next keystrokes; its caches stay
        warm between calls."""
        if self._jedi_pool is None:
            self._jedi_pool = worker_pool(1, multiprocessing.get_context("spawn"))
        return self._jedi_pool

    # -- capabilities -----------------------------------------------------------------------------
    def _capability(self, *path: str) -> Any:
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None) if value is not None else None
        return value

    @property
    def disabled_support(self) -> bool:
        return bool(self._capability("text_document", "code_action", "disabled_support"))

    @property
    def resolve_support(self) -> bool:
        """The client fetches a code action's edit with codeAction/resolve when it is chosen."""
        support = self._capability("text_document", "code_action", "resolve_support")
        return bool(support is not None and "edit" in (support.properties or []))

    @property
    def progress_support(self) -> bool:
        return bool(self._capability("window", "work_done_progress"))

    @property
    def document_changes_support(self) -> bool:
        return bool(self._capability("workspace", "workspace_edit", "document_changes"))

    # -- messages -------------------------------------------------------------------------------
    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def show_once(self, key: str, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        if key not in self._shown_errors:
            self._shown_errors.add(key)
            self.show(message, kind)

    # -- configuration --------------------------------------------------------------------------
    def config_for(self, path: Path | None) -> Config:
        config, error = self.configs.config_for(path)
        if error is not None:
            self.show_once(f"config:{error}", f"GraphMend: {error}; using the default configuration", types.MessageType.Error)
        config = editor_config(config, self.settings)
        if self.settings.cross_file and path is not None:
            config = replace(config, extra_entries=self.crossfile.entries_for(path), disable_resolver=self.imported_disables.names_for)
        return config

    def apply_settings(self, raw: Any) -> None:
        parsed = parse_settings(raw, self.settings)
        for problem in parsed.problems:
            self.show(problem)
        if parsed.settings != self.settings:
            self.settings = parsed.settings
            self.refresh_all()

    # -- analysis -------------------------------------------------------------------------------
    def _text(self, uri: str) -> _Text | None:
        try:
            document = self.workspace.get_text_document(uri)
            return _Text(uri, document.version, document.source)
        except Exception:
            return None

    def _stored(self, uri: str) -> tuple[_Text | None, Analysis | None]:
        """The document's current text, and its stored analysis when that is still fresh: of this
        text, under the current settings and configuration."""
        current = self._text(uri)
        if current is None:
            return None, None
        stored = self.store.current(uri, current.version)
        if stored is not None and stored.generation == self.generation and stored.text == current.text:
            path = path_of(uri)
            if not self.settings.cross_file or path is None or stored.config.extra_entries == self.crossfile.entries_for(path):
                return current, stored
        return current, None

    async def analyze_now(self, uri: str) -> Analysis | None:
        """Analyse the document's current text (off the event loop) and store the result."""
        notebook_uri = notebook_of(self.workspace, uri)
        if notebook_uri is not None:
            return await self.cell_analysis(uri, notebook_uri)
        current, stored = self._stored(uri)
        if current is None or stored is not None:
            return stored
        path = path_of(uri)
        config = self.config_for(path)
        size = len(current.text.encode("utf-8", errors="surrogatepass"))
        if size > config.max_file_bytes:
            self.show_once(
                f"large:{uri}",
                f"GraphMend: {display_name(uri)} has {size:,} bytes, more than max-file-bytes ({config.max_file_bytes:,}); not analysed",
                types.MessageType.Info,
            )
            return None
        loop = asyncio.get_running_loop()
        analysis = await loop.run_in_executor(
            self.analysis_pool, self.store.analyze, uri, current.version, current.text, str(path or uri), config, self.generation
        )
        if self.settings.cross_file and path is not None:
            # after the diagnostics are out: this coroutine's caller publishes before yielding
            task = asyncio.ensure_future(self.follow_calls(analysis, path))
            self.background.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self.background.discard)
        return analysis

    async def cell_analysis(
        self, cell_uri: str, notebook_uri: str, joined: tuple[str, dict[str, CellSpan]] | None = None
    ) -> Analysis | None:
        """A notebook cell's view of the analysis of its whole notebook (all code cells, one module;
        `joined`, when the caller has it already)."""
        joined = joined or joined_cells(self.workspace, notebook_uri)
        current = self._text(cell_uri)
        if joined is None or current is None or cell_uri not in joined[1]:
            return None
        text, cells = joined
        notebook = self.store.get(notebook_uri)
        if notebook is None or notebook.text != text or notebook.generation != self.generation:
            path = path_of(notebook_uri)
            loop = asyncio.get_running_loop()
            notebook = await loop.run_in_executor(
                self.analysis_pool, self.store.analyze, notebook_uri, None, text, str(path or notebook_uri), self.config_for(path), self.generation
            )
        return CellAnalysis(cell_uri, current.version, current.text, notebook, cells[cell_uri])

    async def publish_notebook(self, notebook_uri: str) -> None:
        """Push each code cell's diagnostics (a pull client asks for them per cell instead)."""
        if self.pull:
            return
        joined = joined_cells(self.workspace, notebook_uri)  # once, not once per cell
        for cell_uri in joined[1] if joined is not None else ():
            analysis = await self.cell_analysis(cell_uri, notebook_uri, joined)
            if analysis is not None:
                self.publish(analysis)

    async def follow_calls(self, analysis: Analysis, path: Path) -> None:
        """Resolve the document's calls out of compiled code; re-analyse the open files whose
        compiled helpers that changed."""
        try:
            loop = asyncio.get_running_loop()
            sites = await loop.run_in_executor(self.analysis_pool, call_sites, analysis)
            if self.crossfile.unchanged(path, sites):
                return
            targets = await loop.run_in_executor(self.jedi_pool(), resolve, analysis.text, path, _folders(self), sites)
            changed = self.crossfile.update(path, sites, targets)
        except Exception:
            logger.exception("following calls out of %s failed", path)
            return
        if not changed:
            return
        for uri in list(self.workspace.text_documents):
            target = path_of(uri)
            if target is not None and target.resolve() in changed:
                self.schedule(uri, 0)
        if self.pull and self._capability("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    def schedule(self, uri: str, delay: float) -> asyncio.Task:
        """(Re)start the debounced analysis of a document; the newest call wins."""
        previous = self._scheduled.get(uri)
        if previous is not None and not previous.done():
            previous.cancel()
        task = asyncio.ensure_future(self._debounced(uri, delay))
        self._scheduled[uri] = task
        return task

    async def _debounced(self, uri: str, delay: float) -> Analysis | None:
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            analysis = await self.analyze_now(uri)
        except Exception as exc:
            logger.exception("analysis of %s failed", uri)
            self.show_once(f"crash:{uri}", f"GraphMend could not analyse {display_name(uri)}: {type(exc).__name__}: {exc}", types.MessageType.Error)
            return None
        if analysis is not None and not self.pull:
            self.publish(analysis)
        return analysis

    async def analysis_for(self, uri: str) -> Analysis | None:
        """The analysis of the document's current version, waiting for a pending one if needed."""
        current, stored = self._stored(uri)
        if current is None or stored is not None:
            return stored
        pending = self._scheduled.get(uri)
        if pending is not None and not pending.done():
            try:
                await asyncio.shield(pending)
            except asyncio.CancelledError:
                pass  # superseded by a newer edit: analyse what is there now
        return await self.analyze_now(uri)

    def diagnostics(self, analysis: Analysis) -> list[types.Diagnostic]:
        codec = self.workspace.position_codec
        diagnostics = [to_diagnostic(f, analysis.uri, codec, analysis.lines, self.settings.docs_url) for f in analysis.findings]
        path = path_of(analysis.uri)
        if path is None or not self.runtime.runs:
            return diagnostics
        return decorate(diagnostics, self.runtime.for_text(path, analysis.text), path, analysis.uri, codec, analysis.lines)

    def publish(self, analysis: Analysis) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=analysis.uri, version=analysis.version, diagnostics=self.diagnostics(analysis))
        )

    def clear(self, uri: str) -> None:
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def refresh_all(self) -> None:
        """Settings or a pyproject.toml changed: every open document's result may differ."""
        self.generation += 1
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0)
        if self.pull and self._capability("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    def result_id(self, analysis: Analysis) -> str:
        text = analysis.notebook.text if isinstance(analysis, CellAnalysis) else analysis.text  # other cells count
        return f"{analysis.version}:{self.generation}:{self.runtime.generation}:{hash(text)}"

    def runtime_changed(self) -> None:
        """A confirmation started or finished: show its marks and update the code lenses."""
        if self.pull:
            if self._capability("workspace", "diagnostics", "refresh_support"):
                self.workspace_diagnostic_refresh(None)
        else:
            for uri in list(self.workspace.text_documents):
                stored = self.store.get(uri)
                if stored is not None:
                    self.publish(stored)
        if self._capability("workspace", "code_lens", "refresh_support"):
            self.workspace_code_lens_refresh(None)


server = GraphMendServer()


# -- lifecycle ----------------------------------------------------------------------------------
@server.feature(types.INITIALIZE)
def initialize(ls: GraphMendServer, params: types.InitializeParams) -> None:
    parsed = parse_settings(params.initialization_options)
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
    if uri in ls._pushed_closed and ls.pull:
        ls._pushed_closed.discard(uri)
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


# -- workspace commands -------------------------------------------------------------------------
def _folders(ls: GraphMendServer) -> list[Path]:
    folders = [path_of(f.uri) for f in (ls.workspace.folders or {}).values()]
    found = [f for f in folders if f is not None and f.is_dir()]
    if not found and ls.workspace.root_path:
        found = [Path(ls.workspace.root_path)]
    return found


class _Progress:
    """Work-done progress when the client supports it (cancellable), nothing otherwise."""

    def __init__(self, ls: GraphMendServer, title: str) -> None:
        self.ls = ls
        self.title = title
        self.token: str | None = None

    async def begin(self) -> None:
        if not self.ls.progress_support:
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


def _open_texts(ls: GraphMendServer) -> dict[Path, workspace_ops.OpenText]:
    texts: dict[Path, workspace_ops.OpenText] = {}
    for uri, document in list(ls.workspace.text_documents.items()):
        path = path_of(uri)
        if path is not None:
            texts[path.resolve()] = workspace_ops.OpenText(uri, document.version, document.source)
    return texts


@server.command(MEND_WORKSPACE)
async def mend_workspace(ls: GraphMendServer, *args: Any) -> dict[str, Any]:
    """Apply every safe fix in the workspace folders through one `workspace/applyEdit`."""
    progress = _Progress(ls, "GraphMend: mend workspace")
    await progress.begin()
    summary = workspace_ops.MendSummary()
    loop = asyncio.get_running_loop()
    open_texts = _open_texts(ls)

    def config_for(path: Path) -> Config:
        return ls.config_for(path)

    files = await loop.run_in_executor(
        ls.analysis_pool, lambda: [p.resolve() for p in workspace_ops.workspace_files(_folders(ls), ls.settings.exclude, config_for)]
    )
    jobs = workspace_ops.fix_jobs(files, open_texts, config_for)
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
        opened = open_texts.get(result.path)
        if opened is not None and not ls.document_changes_support:
            # Without versioned edits (documentChanges) the editor cannot refuse an edit computed
            # for an older version: a keystroke between this check and the apply would corrupt the
            # buffer. The file's own fix-all applies to the text the editor has.
            summary.skipped.append(f"{result.path}: open in an editor that cannot apply versioned edits (use fix-all in it)")
            continue
        now = ls._text(opened.uri) if opened is not None else None
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
        edit = types.WorkspaceEdit(document_changes=edits) if ls.document_changes_support else types.WorkspaceEdit(changes=changes)
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


@server.command(EXPLAIN_DECLINE)
def explain_decline(ls: GraphMendServer, *args: Any) -> None:
    """Show why a finding has no fix (the code action of clients without disabled actions)."""
    given = [a for a in args if a not in (None, [], {})]
    if len(given) == 1 and isinstance(given[0], list):  # clients send the arguments as one list or spread
        given = given[0]
    message = str(given[0]) if given and isinstance(given[0], str) else "no reason was given"
    ls.show(f"GraphMend: {message}", types.MessageType.Info)


@server.command(CHECK_WORKSPACE)
async def check_workspace(ls: GraphMendServer, *args: Any) -> dict[str, Any]:
    """Diagnostics for the workspace files that are not open (open ones have theirs already)."""
    progress = _Progress(ls, "GraphMend: check workspace")
    await progress.begin()
    loop = asyncio.get_running_loop()
    open_paths = set(_open_texts(ls))

    def config_for(path: Path) -> Config:
        return ls.config_for(path)

    files = await loop.run_in_executor(
        ls.analysis_pool, lambda: [p.resolve() for p in workspace_ops.workspace_files(_folders(ls), ls.settings.exclude, config_for)]
    )
    closed = [p for p in files if p not in open_paths]
    encoding = str(ls.workspace.position_encoding or types.PositionEncodingKind.Utf16)
    jobs = workspace_ops.check_jobs(closed, config_for, encoding, ls.settings.docs_url)
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
        if diagnostics or uri in ls._pushed_closed:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        if diagnostics:
            ls._pushed_closed.add(uri)
            findings += len(diagnostics)
            files_with += 1
        else:
            ls._pushed_closed.discard(uri)
    message = (
        f"GraphMend: {findings} graph break{'s' if findings != 1 else ''} in {files_with} of {len(results)} closed "
        f"file{'s' if len(results) != 1 else ''}" + (f"; skipped {len(skipped)}" if skipped else "") + (" - cancelled." if cancelled else ".")
    )
    progress.end(message)
    ls.show(message, types.MessageType.Info)
    return {"files": len(results), "files_with_findings": files_with, "findings": findings, "skipped": skipped, "cancelled": cancelled}


# -- runtime confirmation ---------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
def code_lens(ls: GraphMendServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """"Confirm with TorchDynamo" on each compiled class or function that has a sample input."""
    uri = params.text_document.uri
    path, current = path_of(uri), ls._text(uri)
    if path is None or current is None:
        return []
    samples = samples_for_file(ls.config_for(path), path)
    return code_lenses(samples, current.text, ls.runtime, ls.workspace.position_codec, SourceFile(current.text).lines)


def _requested_samples(ls: GraphMendServer, args: tuple[Any, ...]) -> list[Sample]:
    """The samples a `graphmend.confirm` call asks for: `{"target": "path.py:Name"}` (or the bare
    string), `{"uri": ...}` (every sample defined in that file), or nothing: the samples of the open
    files, else every sample configured in the workspace folders."""
    folders = _folders(ls)
    cwd = folders[0] if folders else Path.cwd()
    requested = [a for a in args if a not in (None, [], {})]
    if len(requested) == 1 and isinstance(requested[0], list):
        requested = requested[0]
    samples: list[Sample] = []
    for argument in requested:
        target = argument.get("target") if isinstance(argument, dict) else argument if isinstance(argument, str) else None
        uri = argument.get("uri") if isinstance(argument, dict) else None
        if isinstance(target, str):
            file = Path(target.rpartition(":")[0])
            file = file if file.is_absolute() else cwd / file
            samples.append(find_sample(target, ls.config_for(file), cwd))
        elif isinstance(uri, str) and path_of(uri) is not None:
            path = path_of(uri)
            samples.extend(samples_for_file(ls.config_for(path), path))  # type: ignore[arg-type]
        else:
            raise SampleError(f"graphmend.confirm takes {{'target': 'path.py:Name'}} or {{'uri': ...}}, got {argument!r}")
    if not requested:
        for uri in list(ls.workspace.text_documents):
            path = path_of(uri)
            if path is not None:
                samples.extend(samples_for_file(ls.config_for(path), path))
        if not samples:
            for folder in folders:
                samples.extend(configured_samples(ls.config_for(folder / "pyproject.toml")))
    unique: dict[str, Sample] = {}
    for sample in samples:
        unique.setdefault(sample.key(), sample)
    return list(unique.values())


def _findings_on_disk(ls: GraphMendServer, path: Path) -> tuple[str, list[Finding]] | None:
    """What the static analysis says of the file as dynamo ran it (the saved text)."""
    config = ls.config_for(path)
    source = read_source(path, config.max_file_bytes)
    if source.text is None:
        return None
    return source.text, analyze(source.text, str(path), config)


@server.command(CONFIRM)
async def confirm(ls: GraphMendServer, *args: Any) -> dict[str, Any]:
    """Run each requested sample under TorchDynamo in the background (the user's interpreter, a
    worker process per run) and mark the diagnostics with what dynamo did."""
    try:
        samples = _requested_samples(ls, args)
    except (SampleError, ValueError) as exc:
        ls.show(f"GraphMend: {exc}", types.MessageType.Error)
        return {"runs": [], "error": str(exc)}
    if not samples:
        message = (
            'GraphMend: no sample input to confirm with. Add one to pyproject.toml: [tool.graphmend.samples] '
            '"models/net.py:Net" = "models/net.py:make_sample", where make_sample() returns (callable, args, kwargs).'
        )
        ls.show(message, types.MessageType.Info)
        return {"runs": [], "error": message}
    progress = _Progress(ls, "GraphMend: confirm with TorchDynamo")
    await progress.begin()
    loop = asyncio.get_running_loop()
    options = RunOptions(python=ls.settings.confirm_python, timeout_s=float(ls.settings.confirm_timeout_s), device=ls.settings.confirm_device)
    answers: list[dict[str, Any]] = []
    for number, sample in enumerate(samples, 1):
        if progress.cancelled():
            answers.append({"target": sample.label, "error": "cancelled", "stage": "cancelled"})
            continue
        stop = ls.runtime.start(sample.key())
        if stop is None:
            answers.append({"target": sample.label, "error": "already running", "stage": "running"})
            continue
        progress.message(f"{sample.label} ({number}/{len(samples)})", int(100 * (number - 1) / len(samples)))
        _warn_unsaved(ls, sample.target.path)
        ls.runtime_changed()  # the lens says "running"
        run: ConfirmRun | None = None
        try:
            report = await _in_daemon_thread(run_sample, sample, options, lambda stop=stop: stop.is_set() or progress.cancelled())
            texts: dict[Path, str] = {}
            findings: dict[Path, list[Finding]] = {}
            for path in files_to_compare(report):
                on_disk = await loop.run_in_executor(ls.analysis_pool, _findings_on_disk, ls, path)
                if on_disk is not None:
                    texts[path.resolve()], findings[path.resolve()] = on_disk
            run = ConfirmRun(report, compare(report, findings), texts)
        except ConfirmError as exc:
            if exc.stage != "cancelled":
                ls.show(f"GraphMend: {exc}", types.MessageType.Error)
            if exc.detail:
                ls.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"GraphMend: {exc}\n{exc.detail}"))
            answers.append({"target": sample.label, "error": str(exc), "stage": exc.stage})
        except asyncio.CancelledError:  # the client cancelled the request: stop the worker too
            stop.set()
            progress.end("cancelled")
            raise
        except Exception as exc:
            logger.exception("confirmation of %s failed", sample.label)
            ls.show(f"GraphMend: confirmation of {sample.label} failed: {type(exc).__name__}: {exc}", types.MessageType.Error)
            answers.append({"target": sample.label, "error": f"{type(exc).__name__}: {exc}", "stage": "internal"})
        finally:
            ls.runtime.finish(sample.key(), run)
            ls.runtime_changed()
        if run is not None:
            answers.append(run_summary(run))
            ls.show(f"GraphMend: {sample.label}: {run.describe()}; {run.comparison.summary()}.", types.MessageType.Info)
    progress.end(f"{sum(1 for a in answers if 'graphs' in a)} of {len(samples)} confirmed")
    return {"runs": answers}


def _in_daemon_thread(function: Callable[..., Any], *args: Any) -> asyncio.Future:
    """Run a blocking call in a daemon thread: unlike the executor's threads, it never keeps the
    server alive at exit while a user's model is still compiling (the worker is killed then)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not future.done():
            future.set_exception(error) if error is not None else future.set_result(result)

    def body() -> None:
        try:
            result = function(*args)
        except BaseException as exc:
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=body, name="graphmend-confirm", daemon=True).start()
    return future


def _warn_unsaved(ls: GraphMendServer, path: Path) -> None:
    for uri, document in list(ls.workspace.text_documents.items()):
        found = path_of(uri)
        if found is not None and found.resolve() == path:
            saved = read_source(path, ls.config_for(path).max_file_bytes).text  # as the analysis reads it
            if saved is not None and saved != document.source:
                ls.show(f"GraphMend: {display_name(uri)} has unsaved changes; TorchDynamo runs the saved file", types.MessageType.Warning)
            return


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
